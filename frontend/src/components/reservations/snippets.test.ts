import { describe, expect, it } from "vitest";
import { clientSnippets } from "./snippets";

const read = { id: "rsv_abc", bucket: "belle2", direction: "read" as const };
const write = { ...read, direction: "write" as const };

describe("client snippets", () => {
  it("send the reservation header with every client that can", () => {
    for (const s of clientSnippets(write, "http://127.0.0.1:9000")) {
      expect(s.code).toContain("rsv_abc");
      expect(s.code).toContain("belle2");
    }
    const s3cmdRead = clientSnippets(read, "http://127.0.0.1:9000").find((s) => s.id === "s3cmd");
    expect(s3cmdRead?.code).toContain("cannot send a header with downloads");
  });

  it("use the download or upload form of each tool by direction", () => {
    const byId = (r: typeof read | typeof write) =>
      Object.fromEntries(clientSnippets(r, "http://gw.example:9000").map((s) => [s.id, s.code]));
    const r = byId(read);
    const w = byId(write);
    expect(r.rclone).toContain('--header "X-Tierpilot-Reservation: rsv_abc" :s3:belle2/path ./local');
    expect(w.rclone).toContain('--header "X-Tierpilot-Reservation: rsv_abc" ./local :s3:belle2/path');
    expect(w.s3cmd).toContain('--add-header="X-Tierpilot-Reservation: rsv_abc" put local-file s3://belle2/');
    expect(w.s3cmd).toContain(
      "--host=gw.example:9000 --host-bucket=gw.example:9000 --no-ssl --disable-multipart",
    );
    expect(r.boto3).toContain('s3.meta.events.register("before-call.s3", add_reservation)');
    expect(w.boto3).toContain("upload_file");
    expect(r.tierpilot).toBe(
      "tierpilot cp --endpoint http://gw.example:9000 --reservation rsv_abc -r s3://belle2/path ./local",
    );
  });
});
