"""Hosted bots on the workers (docs/hosted.md): build and validate an uploaded version, and keep
a sandboxed container running for every live one. Each step re-reads its row and does nothing
when the row has moved on, so a task run twice (a redelivery, the sweeper, a beat tick) is
harmless.

- `build(version_id)`: building → the image (the kit's base, the author's files, their pinned
  requirements; or the author's image, pulled) with its log kept → validating: a fresh token,
  an unrated challenge against `VALIDATION_OPPONENT`, the container started for that one match;
  played out without the hosted seat forfeiting → live, else failed with the lines that say why
  (the build's last lines, the container's traceback, the refused action, the time-out; an
  exception the kit caught, playing the first legal action instead, fails it too).
- `reconcile()`: the live versions of bots not suspended are what should run: a missing
  container is started (with a new token: the old one stops working), one that exited is
  started again after 2, 4, 8 … s (at most `BACKOFF_MAX_S`), and a version whose container
  exited `CRASHES` times with less than `STEADY_S` between starts is paused with its last lines;
  containers of other versions (stopped, paused, suspended, failed) are removed; every
  container's latest output is copied to `run_log`.

The containers are the backend's (`hosting.podman` here; Kubernetes: `hosting.kube`), labelled
with the site (`BUMMERL_HOSTED_SITE`), so several sites share a machine.

On Kubernetes (BUMMERL_HOSTING=kubernetes, `Kube`): an image is not built (its reference is
checked, and the nodes pull it when its pod starts); files are failed (nothing on a cluster
builds them; the service refuses them there). Its validation match is played by the pod the
reconciler makes for it (`reconcile_cluster`: the live versions and the validating ones whose
match was made, all in the same sandbox), watched with `hosting.kube.observe`: a pod that
cannot pull its image or ends fails it at once with its lines. Passed, it is live with its
token, its image pinned to the digest its pod ran (the Deployment replaced with it once).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from db import hosted
from db.base import aware, session_factory, utcnow, var_dir
from db.hosted import HostedVersion
from db.models import FINISHED, FORFEIT_ILLEGAL, FORFEIT_TIMEOUT, Match, Refusal
from hosting import kube, podman
from hosting.archive import ArchiveError, check_image
from hosting.sandbox import Limits

log = logging.getLogger(__name__)

VALIDATION_OPPONENT = "house-random"  # BUMMERL_HOSTED_VALIDATION_OPPONENT names another
VALIDATION_TIMEOUT_S = 300.0
CRASHES = 5  # exits in a row, each within STEADY_S of its start, that pause a version
STEADY_S = 600.0  # a container that ran this long before it exited starts the count anew
BACKOFF_S = 2.0  # the first wait after an exit (BUMMERL_HOSTED_BACKOFF_S), doubled each time
BACKOFF_MAX_S = 300.0
LAST_LINES = 20  # of a log, in a reason
RAISED = "the bot failed on match"  # what the kit logs when the bot's act raised (client.runner)


def validation_opponent() -> str:
    return os.environ.get("BUMMERL_HOSTED_VALIDATION_OPPONENT") or VALIDATION_OPPONENT


def site() -> str:
    return os.environ.get("BUMMERL_HOSTED_SITE", "bummerl")


def service_address() -> str:
    return os.environ.get("BUMMERL_SERVICE_ADDRESS", "127.0.0.1:50051")


def socket_dir() -> str:
    """The folder of the service's unix socket for hosted bots (`BUMMERL_HOSTED_SOCKET`, which
    `bummerl up` and `bummerl serve --hosted-socket` make)."""
    socket = os.environ.get("BUMMERL_HOSTED_SOCKET", "")
    if not socket:
        raise podman.PodmanError("BUMMERL_HOSTED_SOCKET is not set: the service's socket for "
                                 "hosted bots (bummerl serve --hosted-socket PATH)")
    return os.path.dirname(os.path.abspath(socket))


def _labels(**more: str) -> dict[str, str]:
    return {"bummerl.site": site(), **more}


def container_name(version_id: int) -> str:
    return f"{site()}-hosted-{version_id}"


def image_tag(row: HostedVersion) -> str:
    return f"localhost/{site()}-hosted/{row.bot_id}-{row.id}:latest"


def last_lines(text: str, count: int = LAST_LINES) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-count:])


def _sessions(sessions: sessionmaker[Session] | None) -> sessionmaker[Session]:
    return sessions or session_factory()


@dataclass(frozen=True)
class Kube:
    """Where hosted bots run on Kubernetes: the cluster's settings and the API objects
    (`hosting.kube.clients`: AppsV1Api, CoreV1Api, NetworkingV1Api) to reach it."""

    cluster: kube.Cluster
    apps: Any
    core: Any
    net: Any


def kube_from_env() -> Kube | None:
    """The cluster when BUMMERL_HOSTING is `kubernetes` (hosting.kube.cluster_from_env), else
    None: hosted bots run with podman."""
    cluster = kube.cluster_from_env()
    return Kube(cluster, *kube.clients()) if cluster is not None else None


NO_CLUSTER_BUILD = ("nothing builds uploaded files on this site's Kubernetes cluster (a build "
                    "needs podman, which its pods cannot run): upload an image instead")


# --- build and validate ----------------------------------------------------------------------

def build(version_id: int, *, sessions: sessionmaker[Session] | None = None,
          where: Kube | None = None) -> str | None:
    """Build and validate a version in state building; its state after (None: nothing to do).
    `where`: the cluster hosted bots run on (None: BUMMERL_HOSTING's, `kube_from_env`)."""
    factory = _sessions(sessions)
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        if row is None or row.state != hosted.BUILDING:
            return None
        kind, source, entry = row.kind, row.source, row.entry
        requirements, image_ref, tag = row.requirements, row.image_ref, image_tag(row)
    where = where or kube_from_env()
    started = time.monotonic()
    try:
        if where is not None:  # the nodes pull an image; nothing builds files there
            if kind != hosted.IMAGE or image_ref is None:
                result = podman.BuildResult(False, NO_CLUSTER_BUILD)
            else:
                tag = check_image(image_ref)
                result = podman.BuildResult(True, f"{image_ref}: an image, nothing to build; "
                                                  "the cluster's node pulls it when its pod "
                                                  "starts")
        elif kind == hosted.IMAGE:
            assert image_ref is not None
            result = podman.pull(image_ref)
            tag = image_ref
        else:
            assert source is not None
            result = podman.build_version(tag, source, entry, requirements or "")
    except (ArchiveError, podman.PodmanError) as e:
        result = podman.BuildResult(False, str(e))
    log.info("hosted version %d built in %.1f s: %s", version_id, time.monotonic() - started,
             "ok" if result.ok else "failed")
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        if row is None or row.state != hosted.BUILDING:  # stopped meanwhile
            return None
        row.build_log = hosted.tail(result.log)
        if not result.ok:
            hosted.set_state(row, hosted.FAILED,
                             "the build failed:\n" + last_lines(result.log))
            session.commit()
            return hosted.FAILED
        row.image = tag
        hosted.set_state(row, hosted.VALIDATING)
        token = hosted.mint_token(row)
        session.commit()
    return validate(version_id, token, sessions=factory, where=where)


def _challenge(token: str) -> int:
    """An unrated match of the version (its token) against the validation opponent."""
    import grpc
    from bummerl.v1 import bot_pb2, bot_pb2_grpc

    with grpc.insecure_channel(service_address()) as channel:
        reply = bot_pb2_grpc.BotServiceStub(channel).Challenge(
            bot_pb2.ChallengeRequest(opponent=validation_opponent(), matches=1),
            metadata=(("authorization", f"Bearer {token}"),), timeout=30)
    return int(reply.matches[0].match_id)


def _outcome(session: Session, match_id: int, bot_id: int) -> tuple[str, str] | None:
    """(state, reason) once the validation match is over, else None."""
    match = session.get(Match, match_id)
    if match is None or match.state != FINISHED:
        return None
    seat = 0 if match.bot0_id == bot_id else 1
    if match.forfeit_seat != seat:
        return hosted.LIVE, ""
    if match.end_reason == FORFEIT_ILLEGAL:
        refusals = session.scalars(select(Refusal).where(
            Refusal.match_id == match_id, Refusal.seat == seat).order_by(Refusal.id)).all()
        said = "\n".join(f"{r.action!r}: {r.message}" for r in refusals[-3:])
        return hosted.FAILED, f"an illegal action in its validation match {match_id}:\n{said}"
    if match.end_reason == FORFEIT_TIMEOUT:
        return hosted.FAILED, (f"no answer in time in its validation match {match_id} "
                               "(its output below)")
    return hosted.FAILED, f"it forfeited its validation match {match_id} ({match.end_reason})"


def validate(version_id: int, token: str, *, sessions: sessionmaker[Session] | None = None,
             where: Kube | None = None) -> str | None:
    """Play the validation match (on the cluster `where`, if given); the version's state
    after."""
    factory = _sessions(sessions)
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        if row is None or row.state != hosted.VALIDATING or row.image is None:
            return None
        bot_id, image, version, kind = row.bot_id, row.image, row.version, row.kind
    name = container_name(version_id) + "-validation"
    try:
        match_id = _challenge(token)
    except Exception as e:  # noqa: BLE001  (the service refused or is away: say so)
        return _finish(factory, version_id, hosted.FAILED,
                       f"its validation match could not start: {e}")
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        if row is not None:
            row.validation_match_id = match_id
            session.commit()
    if where is not None:
        return _validate_on_cluster(factory, where, version_id, bot_id, match_id)
    try:
        podman.start(name, image, token, socket_dir(), Limits.from_env(),
                     _labels(**{"bummerl.validation": str(version_id)}),
                     kit_args(kind, version, matches=1))
    except podman.PodmanError as e:
        return _finish(factory, version_id, hosted.FAILED, f"its container did not start: {e}")
    deadline = time.monotonic() + VALIDATION_TIMEOUT_S
    outcome: tuple[str, str] | None = None
    while outcome is None and time.monotonic() < deadline:
        with factory() as session:
            outcome = _outcome(session, match_id, bot_id)
            now = session.get(HostedVersion, version_id)
            if outcome is None and (now is None or now.state != hosted.VALIDATING):
                break  # stopped meanwhile
        if outcome is None:
            container = _container(name)
            if container is None or exited(container):
                time.sleep(1.0)  # its last answer may still be committing
                code = container.exit_code if container else None
                with factory() as session:
                    outcome = _outcome(session, match_id, bot_id) or (
                        hosted.FAILED, f"it exited (code {code}) before its validation match "
                                       f"{match_id} was over")
                break
            time.sleep(0.5)
    output = _logs(name)
    podman.stop(name)
    if outcome is None:
        outcome = (hosted.FAILED, f"its validation match {match_id} was not over within "
                                  f"{VALIDATION_TIMEOUT_S:g} s")
    return _judge(factory, version_id, match_id, outcome, output)


def _judge(factory: sessionmaker[Session], version_id: int, match_id: int,
           outcome: tuple[str, str], output: str, keep_token: bool = False,
           image: str | None = None) -> str | None:
    state, reason = outcome
    if state == hosted.LIVE and RAISED in output:  # the kit played on for it: still a fault
        state, reason = hosted.FAILED, (f"its bot raised an exception in its validation match "
                                        f"{match_id} (the kit played its first legal action "
                                        "instead)")
    if state == hosted.FAILED and output.strip():
        reason += "\n" + last_lines(output)
    return _finish(factory, version_id, state, reason or None, output,
                   keep_token=keep_token and state == hosted.LIVE,
                   image=image if state == hosted.LIVE else None)


VALIDATION_POLL_S = 2.0  # between two looks at a validating version's match and pod (cluster)


def _validate_on_cluster(factory: sessionmaker[Session], where: Kube, version_id: int,
                         bot_id: int, match_id: int) -> str | None:
    """The validation match `match_id` made: the reconciler runs the version's pod now
    (`reconcile_once`; the beat's rounds too, if another round holds the lock), which plays
    it. Over without the version's seat forfeiting → live, its image pinned to the digest its
    pod ran (the next round replaces the Deployment with it: one restart, the same token); a
    pod that cannot pull its image or ends, or a match not over in time → failed, with the
    pod's state and last lines (the next round deletes its Deployment). The API refusing a
    call here is logged and tried again (the rounds, the next look)."""
    try:
        reconcile_once(sessions=factory, where=where)
    except ApiException as e:
        log.warning("hosted version %d: its validation's round failed: %s", version_id, e)
    deadline = time.monotonic() + VALIDATION_TIMEOUT_S
    outcome: tuple[str, str] | None = None
    pod: kube.PodState | None = None
    while time.monotonic() < deadline:
        with factory() as session:
            outcome = _outcome(session, match_id, bot_id)
            now = session.get(HostedVersion, version_id)
            if outcome is not None or now is None or now.state != hosted.VALIDATING:
                break  # over, or stopped meanwhile
        pod = _pod(where, version_id)
        wrong = kube.broken(pod) if pod is not None else None
        if wrong is not None:
            time.sleep(1.0)  # its last answer may still be committing
            with factory() as session:
                outcome = _outcome(session, match_id, bot_id) or (
                    hosted.FAILED, f"{wrong}, before its validation match {match_id} was over")
            break
        time.sleep(VALIDATION_POLL_S)
    pod = _pod(where, version_id) or pod
    if outcome is None:
        outcome = (hosted.FAILED, f"its validation match {match_id} was not over within "
                                  f"{VALIDATION_TIMEOUT_S:g} s; its pod: " + (
                                      "none made (the hosted namespace's quota?)" if pod is None
                                      else pod.waiting or ("running" if pod.running
                                                           else "not running")))
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        image = row.image if row is not None else None
    pin = kube.pinned(image, pod.image_id) if image and pod else None
    return _judge(factory, version_id, match_id, outcome, pod.log if pod else "",
                  keep_token=True, image=pin)


def _pod(where: Kube, version_id: int) -> kube.PodState | None:
    try:
        return kube.observe(where.core, where.cluster.namespace,
                            version_id=version_id).get(version_id)
    except ApiException as e:
        log.warning("hosted version %d: its pod could not be read: %s", version_id, e)
        return None


def _finish(factory: sessionmaker[Session], version_id: int, state: str, reason: str | None,
            output: str = "", keep_token: bool = False, image: str | None = None) -> str | None:
    """`keep_token`: the token of the container that played the validation stays its (a
    cluster's pod); else a live container gets a token of its own when it starts. `image`:
    what runs from now on (the validated image, pinned to its digest)."""
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        if row is None or row.state != hosted.VALIDATING:
            return None
        hosted.set_state(row, state, reason)
        row.run_log = hosted.tail(output) if output else row.run_log
        if not keep_token:
            row.token_hash = None
        if image:
            row.image = image
        session.commit()
    return state


# --- keep the live ones running --------------------------------------------------------------

BUILD_STALE_S = 3600.0  # a build this old (its worker died) is sent again
LOCK_FILE = "hosted-supervisor.lock"


def reconcile_once(send_build: Callable[[tuple[int]], object] | None = None, *,
                   sessions: sessionmaker[Session] | None = None,
                   where: Kube | None = None) -> list[str]:
    """`reconcile`, in one process of this machine at a time (a file lock: a round that finds
    another running does nothing), after making good what a dead worker left: a build not done
    within `BUILD_STALE_S` is sent again, a validation not over within twice its time-out
    failed (upload it again)."""
    var_dir().mkdir(parents=True, exist_ok=True)
    with open(var_dir() / LOCK_FILE, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return []
        factory = _sessions(sessions)
        done = _stale(factory, send_build)
        return done + reconcile(sessions=factory, where=where)


def _stale(factory: sessionmaker[Session], send_build: Callable[[tuple[int]], object] | None
           ) -> list[str]:
    now = utcnow()
    done: list[str] = []
    with factory() as session:
        rows = session.scalars(select(HostedVersion).where(
            HostedVersion.state.in_((hosted.BUILDING, hosted.VALIDATING)))).all()
        for row in rows:
            age = (now - aware(row.updated_at)).total_seconds()
            if row.state == hosted.BUILDING and age > BUILD_STALE_S and send_build:
                row.updated_at = now
                send_build((row.id,))
                done.append(f"sent the build of version {row.id} again")
            elif row.state == hosted.VALIDATING and age > 2 * VALIDATION_TIMEOUT_S:
                hosted.set_state(row, hosted.FAILED, "its validation was interrupted (a worker "
                                 "stopped): upload it again as a new version")
                row.token_hash = None
                done.append(f"failed version {row.id}: its validation was interrupted")
        session.commit()
    return done


def reconcile(*, sessions: sessionmaker[Session] | None = None,
              where: Kube | None = None) -> list[str]:
    """One round of the supervisor (on the cluster `where`, else BUMMERL_HOSTING's); what it
    did, as lines."""
    factory = _sessions(sessions)
    where = where or kube_from_env()
    if where is not None:
        return reconcile_cluster(where.cluster, where.apps, where.core, where.net,
                                 sessions=factory)
    done: list[str] = []
    containers = {c.name: c for c in podman.containers(f"bummerl.site={site()}")
                  if "bummerl.hosted" in c.labels}
    with factory() as session:
        wanted = {container_name(v.id): v.id for v, _ in hosted.live_versions(session)}
    for name in containers:
        if name not in wanted:
            podman.stop(name)
            done.append(f"removed {name}")
    for name, version_id in wanted.items():
        line = _keep(factory, version_id, name, containers.get(name))
        if line:
            done.append(line)
    return done


def _keep(factory: sessionmaker[Session], version_id: int, name: str,
          container: podman.Container | None) -> str | None:
    now = utcnow()
    with factory() as session:
        row = session.get(HostedVersion, version_id)
        if row is None or row.state != hosted.LIVE or row.image is None:
            return None
        if container is not None and not exited(container):
            output = _logs(name)
            if output:
                row.run_log = hosted.tail(output)
                session.commit()
            return None
        if container is not None:  # it exited: a crash (a live bot never ends by itself)
            output = _logs(name)
            ran = float(container.finished_at - container.started_at) \
                if container.finished_at and container.started_at else 0.0
            if ran >= STEADY_S:
                row.restarts = 0
            wait = backoff_s(row.restarts)
            since = time.time() - container.finished_at if container.finished_at else wait
            if since < wait:
                return None  # backing off
            row.restarts += 1
            row.last_error = f"exit code {container.exit_code}:\n" + last_lines(output)
            row.run_log = hosted.tail(output)
            podman.stop(name)
            if row.restarts >= CRASHES:
                hosted.set_state(row, hosted.PAUSED,
                                 f"its container exited {row.restarts} times, each within "
                                 f"{STEADY_S / 60:g} minutes of its start: paused (`bummerl "
                                 f"bot resume` runs it again). Its last lines:\n"
                                 + last_lines(output))
                row.token_hash = None
                session.commit()
                return f"paused {name} after {row.restarts} exits"
        token = hosted.mint_token(row)
        row.started_at = now
        image, version, restarts, kind = row.image, row.version, row.restarts, row.kind
        people = row.people
        session.commit()
    podman.start(name, image, token, socket_dir(), Limits.from_env(),
                 _labels(**{"bummerl.hosted": str(version_id)}),
                 kit_args(kind, version, people=people))
    return f"started {name}" + (f" (restart {restarts})" if restarts else "")


def kit_args(kind: str, version: str, matches: int | None = None,
             people: str | None = None) -> list[str]:
    """What the kit's command in a version's image is given (an author's own image runs its
    own command: nothing; it is stopped once its validation match is over)."""
    if kind == hosted.IMAGE:
        return []
    return [*(["--matches", str(matches)] if matches else []), "--version", version,
            *(["--people", people] if people else [])]


def spec_of(row: HostedVersion, bot_name: str, limits: Limits) -> kube.HostedSpec:
    assert row.image is not None
    return kube.HostedSpec(
        bot=bot_name, bot_id=row.bot_id, version_id=row.id, version=row.version,
        image=row.image, entry=row.entry if row.kind == hosted.FILES else None,
        cpu=limits.cpus, memory_mib=limits.memory_mb, pids=limits.pids,
        tmpfs_mib=limits.tmp_mb, log_mib=limits.log_mb, people=row.people)


def reconcile_cluster(cluster: kube.Cluster, apps: Any, core: Any, net: Any, *,
                      sessions: sessionmaker[Session] | None = None) -> list[str]:
    """The round on Kubernetes (BUMMERL_HOSTING=kubernetes): one Deployment per live version,
    and per validating one whose validation match was made (hosting.kube.reconcile; a new one
    gets a fresh token, minted here), then each live pod's state read back: its output into
    `run_log`, its restarts (the kubelet restarts a crash with its own backoff), and a version
    restarted `CRASHES` times paused with its last lines (a validating pod is its validation's
    to watch)."""
    factory = _sessions(sessions)
    limits = Limits.from_env()
    with factory() as session:
        desired = [spec_of(row, bot.name, limits)
                   for row, bot in hosted.live_versions(session, validating=True) if row.image]

    def token(spec: kube.HostedSpec) -> str:
        with factory() as session:
            row = session.get(HostedVersion, spec.version_id)
            assert row is not None
            minted = hosted.mint_token(row)
            row.started_at = utcnow()
            session.commit()
        return minted

    done = kube.reconcile(apps, core, net, cluster.namespace, desired, token,
                          cluster.service_address)
    pods = kube.observe(core, cluster.namespace)
    with factory() as session:
        for version_id, pod in pods.items():
            row = session.get(HostedVersion, version_id)
            if row is None or row.state != hosted.LIVE:
                continue
            row.run_log = hosted.tail(pod.log) if pod.log else row.run_log
            if pod.restarts > row.restarts:
                row.restarts = pod.restarts
                row.last_error = f"{pod.last_exit or 'it ended'}:\n" + last_lines(pod.log)
            if row.restarts >= CRASHES and not pod.running:
                hosted.set_state(row, hosted.PAUSED,
                                 f"its pod restarted {row.restarts} times: paused (`bummerl "
                                 "bot resume` runs it again). Its last lines:\n"
                                 + last_lines(pod.log))
                row.token_hash = None
                done.append(f"paused version {version_id} after {row.restarts} restarts")
        session.commit()
    return done


def exited(container: podman.Container) -> bool:
    return container.state not in ("created", "running", "paused", "stopping")


def _container(name: str) -> podman.Container | None:
    found = [c for c in podman.containers(f"bummerl.site={site()}") if c.name == name]
    return found[0] if found else None


def _logs(name: str) -> str:
    try:
        return podman.logs(name)
    except podman.PodmanError as e:
        return f"(its output could not be read: {e})"


def backoff_s(restarts: int) -> float:
    """The wait before a container that exited `restarts` times in a row is started again:
    BACKOFF_S, doubled at each exit, at most BACKOFF_MAX_S."""
    first = float(os.environ.get("BUMMERL_HOSTED_BACKOFF_S") or BACKOFF_S)
    return min(BACKOFF_MAX_S, first * 2.0 ** restarts)


def prune_images(*, sessions: sessionmaker[Session] | None = None) -> list[str]:
    """Remove this site's versions' images that nothing can run again (failed versions', and
    any no version names), and old kits' bases; the images removed."""
    factory = _sessions(sessions)
    with factory() as session:
        keep = set(session.scalars(select(HostedVersion.image).where(
            HostedVersion.state != hosted.FAILED, HostedVersion.image.is_not(None))))
    return podman.prune(keep={image for image in keep if image},
                        prefix=f"localhost/{site()}-hosted/")

