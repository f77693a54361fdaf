// Package cronjob implements the cronjob-controller as upstream v1.37 runs
// it (its "v2" controller): each CronJob is synced when it or one of the
// Jobs it controls changes, and requeued for its next scheduled time.
//
// A sync, in upstream's order:
//
//  1. history: finished Jobs beyond successfulJobsHistoryLimit and
//     failedJobsHistoryLimit are deleted, oldest start time first
//     (history.go);
//  2. the active list is reconciled with the Jobs the CronJob controls:
//     finished ones leave it (SawCompletedJob), the last completion sets
//     lastSuccessfulTime, unknown running ones are reported
//     (UnexpectedJob), vanished ones are dropped once the API server
//     confirms they are gone (MissingJob) (active.go);
//  3. unless the CronJob is being deleted, suspended, or has an unusable
//     time zone or schedule, the most recent unmet scheduled time is
//     found (schedule.go) and, within startingDeadlineSeconds and the
//     concurrencyPolicy, a Job is created for it, named
//     <cronjob>-<minutes since the epoch> (start.go, jobs.go);
//  4. the status is written once, and the CronJob is requeued 100ms after
//     its next scheduled time.
//
// Schedules are parsed with github.com/robfig/cron/v3's standard parser,
// as upstream does; spec.timeZone becomes a TZ= prefix. Time comes from
// the injected clock.
//
// # Differences from upstream
//
// Upstream's schedule arithmetic, quirks included: its estimate of the most
// recent missed time, which can miss one on irregular schedules; a Forbid
// CronJob starting the time it skipped as soon as the running Job finishes,
// unless startingDeadlineSeconds has passed; MissSchedule never recorded,
// since startingDeadlineSeconds moves the earliest time considered past any
// it would report. Time zones are compiled in (time/tzdata), as in
// upstream's binary, and a Job the API server rejects is a FailedCreate
// Event and a retry with the queue's backoff (5 ms doubling to 1000 s), as
// upstream. What differs:
//
//   - a sync woken right after the controller's own status write, before the
//     informer has it (the Job it created or saw finish wakes it), starts
//     from that write's response (written.go); upstream starts from the
//     stale cache, reports the finished Job again (a second SawCompletedJob)
//     or the new one as UnexpectedJob, and fails its write with a conflict;
//   - a status write that changes nothing is not sent (upstream sends one
//     after deleting Jobs past a history limit).
package cronjob
