// Package validatingadmissionpolicystatus implements the
// validatingadmissionpolicy-status-controller: for every
// ValidatingAdmissionPolicy whose metadata.generation is ahead of
// status.observedGeneration it type-checks the CEL expressions of
// spec.validations (expression and messageExpression) against the schemas
// of the kinds the policy matches and of its paramKind, and writes
// status.typeChecking.expressionWarnings and status.observedGeneration with
// a server-side apply of the status subresource (field manager
// "validatingadmissionpolicy-status", forced), as upstream does.
//
// The type checking itself is k8s.io/apiserver's CEL machinery
// (admission/plugin/policy/validating.TypeChecker); the schemas come from
// the kube-apiserver's OpenAPI v3 document of each group version, and
// resources resolve to kinds through the shared discovery RESTMapper.
package validatingadmissionpolicystatus
