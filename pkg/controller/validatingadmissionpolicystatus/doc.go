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
//
// # Differences from upstream
//
// The loop is upstream's (a policy is checked once per generation, the
// result applied under upstream's field manager) around k8s.io/apiserver's
// own TypeChecker, so the warnings' text is upstream's to the byte. Upstream
// resolves the schemas of built-in kinds from the OpenAPI definitions
// compiled into its binary (k8s.io/kubernetes' pkg/generated/openapi, which
// kcm may not import) and only custom resources from the API server's
// /openapi/v3; kcm resolves every kind from /openapi/v3, which the API
// server builds from the same definitions. Against an API server of the same
// release the schemas, and so the warnings, are the same (parity scenario
// validatingadmissionpolicy-status); against an older or newer one kcm
// checks against the schemas that server actually serves.
package validatingadmissionpolicystatus
