package storageversionmigrator

import (
	"fmt"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition reasons, upstream's.
const (
	reasonRunning   = "MigrationRunning"
	reasonCompleted = "MigrationCompleted"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
)

func isRunning(svm *svmv1.StorageVersionMigration) bool {
	return meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationRunning))
}

// isTerminal reports whether the migration succeeded or failed.
func isTerminal(svm *svmv1.StorageVersionMigration) bool {
	return meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationSucceeded)) ||
		meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationFailed))
}

// addCondition appends a True condition of the type unless the type is
// present already (with any status): upstream sets Running and Failed this
// way where a condition must not be set twice.
func addCondition(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, reason, message string, now metav1.Time) bool {
	if meta.FindStatusCondition(svm.Status.Conditions, string(t)) != nil {
		return false
	}
	svm.Status.Conditions = append(svm.Status.Conditions, metav1.Condition{
		Type: string(t), Status: metav1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: message,
	})
	return true
}

// setCondition sets a True condition with meta.SetStatusCondition (the
// transition time changes only when the status does) and reports whether
// anything changed.
func setCondition(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, reason, message string, now metav1.Time) bool {
	return meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(t), Status: metav1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: message,
	})
}

// runningMessage is the Running condition's message: progress once the
// objects were counted (remaining of total, or all verified), and the
// transient error that interrupted the run, if any.
func runningMessage(remaining, total int, counted bool, transient error) string {
	msg := "The migration is running"
	if counted && total > 0 {
		if remaining > 0 {
			msg += fmt.Sprintf(", %d/%d objects not yet migrated", remaining, total)
		} else {
			msg += fmt.Sprintf(", %d objects verified migrated", total)
		}
	}
	if transient != nil {
		msg += "; transient error: " + transient.Error()
	}
	return msg
}
