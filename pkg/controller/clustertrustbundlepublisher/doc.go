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
//
// # Differences from upstream
//
//   - --root-ca-file is watched and reloaded when it changes on disk
//     (k8s.io/apiserver's dynamic CA file content, as the kube-apiserver
//     reloads its own CA files): the new CA's bundle is created and the old
//     one deleted at once, where upstream reads the file once at start and
//     publishes a rotated CA only after a restart. A file replaced by
//     something that does not parse keeps the last good CA. Without
//     --root-ca-file the kubeconfig's CA is published, once, as upstream.
//     The root-ca-certificate-publisher (kube-root-ca.crt) still reads the
//     file once, as upstream;
//   - which certificates.k8s.io version serves ClusterTrustBundles is
//     discovered when the controller starts running, not in its
//     constructor; a failed discovery is retried every 10 s (upstream fails
//     the process's start), and with no version served it logs upstream's
//     line and idles (upstream does not start it);
//   - one unstructured code path serves the three versions.
package clustertrustbundlepublisher
