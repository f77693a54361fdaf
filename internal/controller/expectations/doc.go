// Package expectations lets a controller remember the writes it made and
// has not seen come back through its informers yet, so that it does not act
// twice on a stale cache.
//
// Expectations counts the pod creations and deletions a controller is
// waiting to observe, per controller key; a key whose expectations are not
// met is not synced until they are, or until they expire after Timeout (a
// dropped watch event must not put a controller to sleep forever).
// UIDTracking also remembers which pods it deleted, so that a graceful
// deletion (first seen as an update setting deletionTimestamp, later as a
// delete) is counted once.
//
// Consistency records the resourceVersions a controller wrote for an owner
// and reports the cache as stale until the informers have caught up with
// them (upstream's StaleControllerConsistency* feature gates).
package expectations
