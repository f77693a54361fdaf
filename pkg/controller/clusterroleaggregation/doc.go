// Package clusterroleaggregation implements the
// clusterrole-aggregation-controller: the rules of a ClusterRole that has an
// aggregationRule are the union of the rules of every other ClusterRole its
// clusterRoleSelectors match, kept up to date as those parts change.
package clusterroleaggregation
