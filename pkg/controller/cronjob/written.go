package cronjob

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/kcm-dev/kcm/internal/controller"
)

// writtenCronJobs holds the CronJob as the controller's last status write
// returned it while the cache lags. The Job the write reported (created,
// or seen finished) often wakes the next sync before the CronJob's own
// update reaches the cache; starting from the cache, that sync would
// report the finished Job again (SawCompletedJob), or the new one as
// UnexpectedJob, and fail its write with a conflict, as upstream's does.
type writtenCronJobs = controller.Written[batchv1.CronJob, *batchv1.CronJob]
