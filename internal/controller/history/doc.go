// Package history keeps the ControllerRevisions through which the
// DaemonSet and StatefulSet controllers record each version of their pod
// template, as upstream's controller history does: the same names, hash,
// labels and collision handling, so that revisions written by upstream's
// controller manager are recognised as the same revisions by ours (and a
// set taken over from upstream does not roll its pods).
//
// A revision of an owner is named <owner>-<hash>, where hash is the FNV-32
// (not 32a) of the revision's raw data followed, when the owner has one, by
// its status.collisionCount in decimal, encoded with rand.SafeEncodeString.
// When a revision of that name exists with other data, the collision count
// is raised and the hash taken again.
//
// Revisions are found through an informer index (AddIndex) by controller
// UID, orphans by namespace; adoption and release go through
// internal/controller/controllerref with Patcher.
package history
