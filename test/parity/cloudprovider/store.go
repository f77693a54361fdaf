package cloudprovider

import (
	"context"
	"maps"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// store is one piece of the cloud's state: string keys and values, kept in
// a ConfigMap once a client is set, in memory before.
type store struct {
	name string

	mu     sync.Mutex
	client kubernetes.Interface
	mem    map[string]string
}

func newStore(name string) *store { return &store{name: name, mem: map[string]string{}} }

func (s *store) setClient(c kubernetes.Interface) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client = c
}

// read returns the whole state.
func (s *store) read(ctx context.Context) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readLocked(ctx)
}

func (s *store) readLocked(ctx context.Context) (map[string]string, error) {
	if s.client == nil {
		return maps.Clone(s.mem), nil
	}
	cm, err := s.client.CoreV1().ConfigMaps(StateNamespace).Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := maps.Clone(cm.Data)
	if out == nil {
		out = map[string]string{}
	}
	return out, nil
}

// update applies change to the state and writes it if it changed.
func (s *store) update(ctx context.Context, change func(map[string]string)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		change(s.mem)
		return nil
	}
	cms := s.client.CoreV1().ConfigMaps(StateNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, s.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			data := map[string]string{}
			change(data)
			if len(data) == 0 {
				return nil
			}
			_, err = cms.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: StateNamespace}, Data: data}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(v1.Resource("configmaps"), s.name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		data := maps.Clone(cm.Data)
		if data == nil {
			data = map[string]string{}
		}
		change(data)
		if maps.Equal(data, cm.Data) {
			return nil
		}
		cm = cm.DeepCopy()
		cm.Data = data
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
}

// nodeAnnotation reads an annotation of a Node through the store's client
// ("" without a client or Node).
func (s *store) nodeAnnotation(ctx context.Context, node, key string) (string, error) {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c == nil {
		return "", nil
	}
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return n.Annotations[key], nil
}
