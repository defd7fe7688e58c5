"""The distributed half of bummerl: Celery workers, house bots, batch simulations, the ladder.

- `workers.bots`: the house bots (observation-only, like any outside bot);
- `workers.batch`: duplicate-pair batch simulations, played in-process with the engine;
- `workers.ladder`: pairings and openskill ratings (the standings and a simulation's progress,
  read by the dashboard too, live in `db.standings` and `db.progress`; the statistics in
  `db.stats`);
- `workers.app` / `workers.tasks`: the Celery app, its queues (`moves`, `batch`) and tasks,
  and the senders that enqueue them (passed to the modules that enqueue: none imports the
  task registry);
- `workers.sweeper`: re-enqueues whatever the database says is owed.
"""
