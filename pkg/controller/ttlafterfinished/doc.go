// Package ttlafterfinished implements the ttl-after-finished-controller: a
// Job that has finished (a Complete or Failed condition is True) and sets
// spec.ttlSecondsAfterFinished is deleted, with foreground propagation and
// a UID precondition, that many seconds after its finish time (the
// condition's lastTransitionTime). A Job whose TTL has not expired is
// requeued for the moment it will; before deleting, the Job is read afresh
// from the API server, so a TTL changed meanwhile is respected.
//
// # Differences from upstream
//
// None visible: upstream's behaviour, on the injected clock. A Job whose
// finish time cannot be read is logged and dropped (controller.Permanent)
// until it changes again, where upstream drops it without a word.
package ttlafterfinished
