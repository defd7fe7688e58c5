"""The distributed half of bummerl: Celery workers, house bots, batch simulations, the ladder.

- the house bots (observation-only, like any outside bot) and the duplicate-pair batch play
  they run in simulations live in the pure top-level package `bots` (`bots.batch`), which the
  analyst and the kit use too;
- `workers.ladder`: pairings and openskill ratings (the standings and a simulation's progress,
  read by the dashboard too, live in `db.standings` and `db.progress`; the statistics in
  `bots.stats`);
- `workers.app` / `workers.tasks`: the Celery app, its queues (`moves`, `batch`) and tasks,
  and the senders that enqueue them (passed to the modules that enqueue: none imports the
  task registry);
- `workers.sweeper`: re-enqueues whatever the database says is owed.
"""
