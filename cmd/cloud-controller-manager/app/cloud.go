package app

// The cloud providers compiled into cloud-controller-manager register
// themselves with k8s.io/cloud-provider when imported; --cloud-provider
// selects one. An out-of-tree provider is added the same way, with a blank
// import here.
import _ "github.com/kcm-dev/kcm/pkg/cloudprovider/local"
