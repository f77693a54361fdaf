// Package garbagecollector implements the garbage-collector-controller: it
// deletes objects whose every owner (metadata.ownerReferences) is gone, and
// carries out the foreground and orphan deletion of owners.
//
// A single goroutine (builder.go) turns the events of metadata-only
// informers, one per deletable resource (discovery.go, through
// internal/controller/resourcemonitor), into a
// graph of owners and dependents (graph.go). It hands nodes to two queues:
// attemptToDelete (delete.go) verifies, by live reads, whether an object's
// owners are gone and deletes it with the propagation policy upstream
// chooses, or removes the foregroundDeletion finalizer of an owner whose
// blocking dependents are gone; attemptToOrphan (orphan.go) removes the
// ownerReferences to an owner from its dependents (patch.go), then the
// owner's orphan finalizer. dot.go serves the graph in DOT at
// /debug/controllers/garbagecollector/graph; controller.go wires it up.
package garbagecollector
