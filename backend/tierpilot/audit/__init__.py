"""The audit log: who did what security-relevant thing, when and from where.

It knows no other domain (it imports only ``kit``), so every layer above it records through
``audit.service.record`` in the transaction of the change it describes: an event is kept exactly when the
change is. Its HTTP endpoints sit in ``auth.audit_router``, which can check that the caller is an admin.
"""
