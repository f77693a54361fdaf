// Package clustertrustbundlepublisher implements the
// kube-apiserver-serving-clustertrustbundle-publisher-controller: it
// publishes the CA that verifies the kube-apiserver's serving certificate
// (--root-ca-file, else the CA of the controller manager's kubeconfig) as a
// cluster-scoped ClusterTrustBundle for the signer
// kubernetes.io/kube-apiserver-serving, named
// "kubernetes.io:kube-apiserver-serving:<first 12 bytes of the bundle's
// SHA-256, hex>", and deletes every other bundle of that signer. It uses the
// newest of certificates.k8s.io v1, v1beta1 and v1alpha1 the server serves;
// when none serves clustertrustbundles it logs so and does nothing, as
// upstream does not start it then. The bundle is restored when edited or
// deleted, and follows --root-ca-file when the file changes on disk.
package clustertrustbundlepublisher
