package parity

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Identity is a user a create step impersonates (the admin may).
type Identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// create creates each object times times (a POST, as a kubelet files its
// CertificateSigningRequests), as the admin or, with as, as that user:
// what the API server fills in from the requester (a request's username
// and groups) is then that user's.
func (r *stepRunner) create(ctx context.Context, objs Objects, as *Identity, times int) error {
	dyn := r.kinds.dyn
	if as != nil {
		cfg := rest.CopyConfig(r.cluster.RESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: as.User, Groups: as.Groups}
		var err error
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			return fmt.Errorf("create as %s: %w", as.User, err)
		}
	}
	for range times {
		if err := r.createOnce(ctx, dyn, objs); err != nil {
			return err
		}
	}
	return nil
}

func (r *stepRunner) createOnce(ctx context.Context, dyn dynamic.Interface, objs Objects) error {
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return err
		}
		m, err := r.kinds.mapping(u.GetAPIVersion(), u.GetKind())
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// maxTimes bounds a create step's times: a flood, not a load test.
const maxTimes = 10000

// validateCreate checks a create step's objects and identity; as is
// allowed with create only.
func (st *Step) validateCreate() []error {
	var errs []error
	for i, o := range st.Create {
		err := validateObject(o)
		if st.Times > 1 {
			md, _ := o["metadata"].(map[string]any)
			err = nil
			if g, _ := md["generateName"].(string); g == "" {
				err = errors.New("metadata.generateName is required with times")
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("create[%d]: %w", i, err))
		}
	}
	if st.Times < 0 || st.Times > maxTimes {
		errs = append(errs, fmt.Errorf("times: %d is not in [0, %d]", st.Times, maxTimes))
	}
	if st.Times != 0 && st.Create == nil {
		errs = append(errs, errors.New("times: only with create"))
	}
	if st.As != nil && st.Create == nil {
		errs = append(errs, errors.New("as: only with create"))
	}
	if st.As != nil && st.As.User == "" {
		errs = append(errs, errors.New("as: user is required"))
	}
	return errs
}
