// Package rootcacertpublisher implements the
// root-ca-certificate-publisher-controller: it publishes the cluster's root
// CA bundle as the ConfigMap kube-root-ca.crt (key ca.crt) in every
// namespace, and restores it when it is edited or deleted, so that pods can
// verify the kube-apiserver through its internal endpoints.
package rootcacertpublisher
