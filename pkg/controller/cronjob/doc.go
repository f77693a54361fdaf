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
package cronjob
