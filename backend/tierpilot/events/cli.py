"""`tierpilot events …`: targets and dead letters for operators."""

from __future__ import annotations

import json

import typer

events_app = typer.Typer(help="Bucket event notifications: targets and dead letters.", no_args_is_help=True)
targets_app = typer.Typer(help="Where bucket events go.", no_args_is_help=True)
events_app.add_typer(targets_app, name="targets")


@targets_app.command("add")
def targets_add(
    name: str = typer.Argument(..., help="the target's name: its ARN's id"),
    type_: str = typer.Option(..., "--type", help="webhook | amqp | mqtt | nats | redis"),
    url: str = typer.Option(..., "--url", help="http(s)://…, amqp://user:pass@host:5672/%2F, mqtt://host:1883, "
                            "nats://host:4222, redis://host:6379/0"),
    topic: str = typer.Option("", "--topic", help="routing key (AMQP), topic (MQTT), subject (NATS), stream (Redis)"),
    option: list[str] = typer.Option([], "--option", help="KEY=VALUE: exchange (AMQP), stream (NATS), maxlen "
                                     "(Redis)"),
) -> None:
    """Add a target and print its ARN (the Topic or Queue of a bucket's notification configuration)."""
    from tierpilot.events import service
    from tierpilot.kit.db import transaction
    from tierpilot.kit.errors import DomainError

    options = dict(o.split("=", 1) for o in option if "=" in o)
    try:
        with transaction(write=True) as session:
            new = service.add_target(session, name, type_, url, topic, options)
    except DomainError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(new.arn)
    if new.secret:
        typer.echo(f"signing secret (shown once): {new.secret}", err=True)


@targets_app.command("list")
def targets_list(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Targets with their ARNs (URLs without passwords)."""
    from tierpilot.events import names, service
    from tierpilot.kit.db import transaction

    with transaction() as session:
        rows = [{"name": t.name, "type": t.type, "url": t.shown_url, "topic": t.topic,
                 "arn": names.arn(t.name, t.type)} for t in service.list_targets(session)]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for r in rows:
        typer.echo(f"{r['name']:20} {r['type']:8} {r['arn']:50} {r['url']} {r['topic']}")


@events_app.command("deadletters")
def deadletters(replay: bool = typer.Option(False, "--replay", help="queue every dead letter again")) -> None:
    """List events their targets refused too often; --replay queues them again (in their order)."""
    from tierpilot.events import repository, service
    from tierpilot.kit.db import transaction

    if replay:
        with transaction(write=True) as session:
            typer.echo(f"{service.replay_dead_letters(session)} replayed")
        return
    with transaction() as session:
        for d in repository.list_dead_letters(session):
            typer.echo(f"{d.id:8} target {d.target_id:4} {d.name:40} bucket {d.bucket_id} {d.key!r} "
                       f"attempts {d.attempts}: {d.last_error}")
