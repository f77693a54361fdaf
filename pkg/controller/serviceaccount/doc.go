// Package serviceaccount implements the serviceaccount-controller: it makes
// sure every active namespace holds a ServiceAccount named "default", and
// creates it again when it is deleted. Namespaces that are not Active
// (terminating ones) are left alone.
package serviceaccount
