// Package selinuxwarning implements the selinux-warning-controller (off by
// default, and only with the SELinuxChangePolicy gate): it records, for
// every pod that is not finished, the SELinux label and change policy with
// which the kubelet would mount each of its volumes, and reports two pods
// that would mount the same volume in conflicting ways, since only one of
// them could use it on a node. Both pods get a Normal Event
// (SELinuxLabelConflict or SELinuxChangePolicyConflict, upstream's
// messages; the other pod is named only when it is in the same namespace),
// and every current conflict is a series of the metric
// selinux_warning_controller_selinux_volume_conflict. A pod that mounts
// one volume with two labels gets a Warning MultipleSELinuxLabels Event.
//
// As upstream, labels are the pods' SELinux options as written (a
// container's, else the pod's): the controller cannot know the nodes'
// defaults, so a part left empty conflicts with nothing, except the level,
// which must be equal. A volume is mounted with -o context only if its
// plugin supports it (FC, iSCSI; a CSI driver whose CSIDriver has
// seLinuxMount: true; an in-tree volume migrated to CSI as its driver) and
// the pod did not choose the Recursive policy; otherwise its policy counts
// as Recursive with an empty label. Volumes are identified as upstream
// does (CSI driver and handle; FC targets and LUN; iSCSI portal, IQN and
// LUN); other volumes never conflict and are not recorded.
//
// The controller writes nothing but Events. Pods are looked at when they
// are added, finish or are deleted, when a claim or volume they use is
// bound, and when a CSIDriver's seLinuxMount changes.
//
// # Differences from upstream
//
//   - upstream's volume plugins are replaced by the few sources whose mounts
//     can conflict (CSI, in-tree volumes migrated to CSI as their driver, FC,
//     iSCSI); hostPath and NFS volumes, which upstream records but which
//     never conflict (no -o context), are not recorded;
//   - inline CSI volumes are skipped; upstream fails to name them and retries
//     the pod with backoff for ever;
//   - a pod mounting one volume with two labels gets its Warning on each sync
//     that finds it but is not retried (upstream retries for ever, so its
//     Event's count grows);
//   - migrated in-tree volumes are keyed by driver and in-tree ID, close to
//     csi-translation-lib's handle (a GCE PD by disk name, without its zone);
//   - the conflict metric reports the cache of the controller built last (one
//     per process).
package selinuxwarning
