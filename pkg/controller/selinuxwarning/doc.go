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
package selinuxwarning
