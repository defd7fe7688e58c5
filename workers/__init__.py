"""The distributed half of bummerl: Celery workers, house bots, batch simulations, the ladder.

- `workers.bots`: the house bots (observation-only, like any outside bot);
- `workers.batch`: duplicate-pair batch simulations, played in-process with the engine;
- `workers.stats`: confidence intervals, Elo difference, SPRT;
- `workers.ladder`: pairings and openskill ratings;
- `workers.app` / `workers.tasks`: the Celery app, its queues (`moves`, `batch`) and tasks;
- `workers.sweeper`: re-enqueues whatever the database says is owed.
"""
