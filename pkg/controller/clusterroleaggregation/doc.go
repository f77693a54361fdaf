// Package clusterroleaggregation implements the
// clusterrole-aggregation-controller: the rules of a ClusterRole that has an
// aggregationRule are the union of the rules of every other ClusterRole its
// clusterRoleSelectors match, kept up to date as those parts change.
//
// # Differences from upstream
//
// None visible: upstream's rules. A ClusterRole with an invalid selector is
// logged and dropped (controller.Permanent) until it is edited, where
// upstream drops it without a word.
package clusterroleaggregation
