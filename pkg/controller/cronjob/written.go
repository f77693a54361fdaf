package cronjob

import (
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// writtenCronJobs remembers, per key, the CronJob as the API server
// returned it from the controller's last status write, until the informer
// has caught up with it. The Job the write reported (created, or seen
// finished) often wakes the next sync before the CronJob's own update
// reaches the cache; starting from the cache, that sync would report the
// finished Job again (SawCompletedJob), or the new one as UnexpectedJob,
// and fail its write with a conflict, as upstream's does. It starts from
// the written copy instead. Entries live only while the cache lags.
type writtenCronJobs struct {
	mu sync.Mutex
	m  map[string]*batchv1.CronJob
}

// record keeps cj, the API server's answer to a write of key.
func (w *writtenCronJobs) record(key string, cj *batchv1.CronJob) {
	cj.ManagedFields = nil
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*batchv1.CronJob{}
	}
	w.m[key] = cj
}

// newest returns the written copy of key if it is newer than cached, else
// cached; it forgets the written copy once the cache has caught up with
// it or holds another object.
func (w *writtenCronJobs) newest(key string, cached *batchv1.CronJob) *batchv1.CronJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	written, ok := w.m[key]
	if !ok {
		return cached
	}
	if written.UID == cached.UID {
		if cmp, err := resourceversion.CompareResourceVersion(written.ResourceVersion, cached.ResourceVersion); err == nil && cmp > 0 {
			return written
		}
	}
	delete(w.m, key)
	return cached
}

// forget drops key (its CronJob is gone).
func (w *writtenCronJobs) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}
