package signer

import (
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// recordingSecretInformer and recordingConfigMapInformer keep the handler
// the controller registers, so that tests can fire events at it.
type recordingSecretInformer struct {
	coreinformers.SecretInformer
	handler cache.ResourceEventHandler
}

func (r *recordingSecretInformer) Informer() cache.SharedIndexInformer {
	return &recordingInformer{SharedIndexInformer: r.SecretInformer.Informer(), handler: &r.handler}
}

type recordingConfigMapInformer struct {
	coreinformers.ConfigMapInformer
	handler cache.ResourceEventHandler
}

func (r *recordingConfigMapInformer) Informer() cache.SharedIndexInformer {
	return &recordingInformer{SharedIndexInformer: r.ConfigMapInformer.Informer(), handler: &r.handler}
}

type recordingInformer struct {
	cache.SharedIndexInformer
	handler *cache.ResourceEventHandler
}

func (r *recordingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	*r.handler = h
	return r.SharedIndexInformer.AddEventHandler(h)
}
