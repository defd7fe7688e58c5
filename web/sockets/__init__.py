"""The socket tier: the browsers' live table and match streams, on one asyncio event loop per
process.

The Flask pages stay as they are; what changes live on a person's table comes from here. A
table page opens `GET /sockets/table/<match id>?ticket=...` (server-sent events) at this tier;
the ticket (web.tickets) says which person may follow which table with which session. This
process keeps one PeopleService.FollowTables stream to the engine service for all its tables
(`upstream`) and each event it sends a browser is the person's whole table, as the web's
`/api/table/<id>` would give it (web.tableview), with the actions since the last event: the
browser draws it and asks nothing. Event ids are the table's seq, so a dropped stream resumes
from the last seq the browser saw (`Last-Event-ID`) with every action after it.

No thread per stream, no database poller, no re-fetch per event: an open table is a task and
a few small objects here and a subscription at the service. The database is read only to check
that the streams' sessions are live (at the open, then every `session_check_s` for all of
them at once): a revoked session's stream ends. More processes behind one address scale it out
(each follows only its own browsers' tables); a browser that lands on another after a drop
resumes there the same way.

A match page (the public view) follows its match here too (`spectate`): one WatchMatch stream
per followed match, one render of the page's live part per change, shared by its viewers.
"""
