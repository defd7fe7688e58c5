"""The replay page's "analyse" button goes back to the page it was asked from (`next`) only
when that is a path of this site (web.security.local_path), else to the match's page: no open
redirect by a tab, newline or backslash that browsers drop or read as a slash (issue 44)."""

from __future__ import annotations

from sqlalchemy import select
from test_web_analysis import bench_export, client, csrf, service, sessions  # noqa: F401
from test_web_signin import FOREIGN

from db.models import Match


def test_the_analyse_button_redirects_only_to_this_site(client, sessions):  # noqa: F811
    bench_export().fill(sessions.kw["bind"], 1, seed=4)
    with sessions() as s:
        match_id = s.scalars(select(Match.id).where(Match.state == "finished").limit(1)).one()
    for target in FOREIGN:
        answer = client.post(f"/matches/{match_id}/analyse", data={"next": target},
                             headers=csrf(client))
        assert (answer.status_code, answer.headers["Location"]) == (
            303, f"/matches/{match_id}"), target
    page = f"/matches/{match_id}/hands/0#analysis"
    answer = client.post(f"/matches/{match_id}/analyse", data={"next": page},
                         headers=csrf(client))
    assert answer.headers["Location"] == page
