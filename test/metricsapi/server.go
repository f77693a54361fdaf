package metricsapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// Options configure a Server.
type Options struct {
	// Pods lists the pods whose metrics are asked for (required).
	Pods kubernetes.Interface
	// ClientCA, if set, is the CA of the client certificate every request
	// must carry (the kube-apiserver's front-proxy CA).
	ClientCA []byte
	// Window is the window of resource and custom metric samples.
	Window time.Duration
	// ServiceName and ServiceNamespace are the Service the APIServices
	// point at; the serving certificate is for its DNS name. Defaults:
	// test-metrics-api in kube-system.
	ServiceName, ServiceNamespace string
}

// Request is one request the server answered.
type Request struct {
	Path string
	// User is the X-Remote-User the aggregator sent.
	User string
}

// Server serves the three metrics APIs. Its methods are safe for
// concurrent use.
type Server struct {
	opts   Options
	port   int
	caPEM  []byte
	server *http.Server
	done   chan struct{}

	mu          sync.Mutex
	values      Values
	unavailable bool
	requests    []Request
}

// Start listens on 127.0.0.1 (a free port) and serves until ctx is done or
// Close is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Pods == nil {
		return nil, errors.New("metricsapi: Options.Pods is required")
	}
	if opts.ServiceName == "" {
		opts.ServiceName = "test-metrics-api"
	}
	if opts.ServiceNamespace == "" {
		opts.ServiceNamespace = "kube-system"
	}
	cert, caPEM, err := servingCert(opts.ServiceName + "." + opts.ServiceNamespace + ".svc")
	if err != nil {
		return nil, err
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if len(opts.ClientCA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(opts.ClientCA) {
			return nil, errors.New("metricsapi: no certificate in ClientCA")
		}
		tlsCfg.ClientCAs, tlsCfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("metricsapi: %w", err)
	}
	s := &Server{opts: opts, port: ln.Addr().(*net.TCPAddr).Port, caPEM: caPEM, done: make(chan struct{})}
	s.server = &http.Server{Handler: s, TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.server.ServeTLS(ln, "", "")
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// Close stops the server and waits for it.
func (s *Server) Close() {
	_ = s.server.Close()
	<-s.done
}

// Set adds values, replacing those with the same keys.
func (s *Server) Set(v Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values.Usage = upsert(s.values.Usage, v.Usage)
	s.values.Custom = upsert(s.values.Custom, v.Custom)
	s.values.External = upsert(s.values.External, v.External)
	if v.Unavailable != nil {
		s.unavailable = *v.Unavailable
	}
}

// Reset forgets every value.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values, s.unavailable = Values{}, false
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) snapshot() Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Values{
		Usage:    append([]Usage(nil), s.values.Usage...),
		Custom:   append([]Custom(nil), s.values.Custom...),
		External: append([]External(nil), s.values.External...),
	}
}

// ServeHTTP answers discovery and metric requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.RequestURI(), User: r.Header.Get("X-Remote-User")})
	unavailable := s.unavailable
	s.mu.Unlock()
	if r.Method != http.MethodGet {
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{}, r.Method))
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "apis" {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
		return
	}
	gv, rest := parts[1]+"/"+parts[2], parts[3:]
	if unavailable && len(rest) > 0 {
		writeStatus(w, apierrors.NewServiceUnavailable("the metrics source is unavailable"))
		return
	}
	var obj any
	var err error
	switch gv {
	case resourceGV.String():
		obj, err = s.resourceMetrics(r, rest)
	case customGV.String():
		obj, err = s.customMetrics(r, rest)
	case externalGV.String():
		obj, err = s.externalMetrics(r, rest)
	default:
		err = apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path)
	}
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(obj)
}

// writeStatus writes an API error as a Status.
func writeStatus(w http.ResponseWriter, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	st := status.Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

// runningPods lists the Running pods of namespace that selector selects.
func (s *Server) runningPods(ctx context.Context, namespace, selector string) ([]v1.Pod, error) {
	list, err := s.opts.Pods.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []v1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == v1.PodRunning {
			out = append(out, p)
		}
	}
	return out, nil
}
