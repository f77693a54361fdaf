package chaos

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

// throttleLevel names the PriorityLevelConfiguration and FlowSchema.
const throttleLevel = "chaos-kcm"

// throttlePrecedence puts the FlowSchema before kube-controller-manager's
// (800), kube-system-service-accounts' (900) and endpoint-controller's
// (150), but after system-leader-election's (100): the Lease keeps
// renewing, as in a real cluster, so the throttled controller manager
// stays the leader and only its controllers' requests queue.
const throttlePrecedence = 120

// throttle gives the controller manager's users one seat of the
// apiserver's concurrency and a queue of one: what does not fit is
// answered 429 with Retry-After by the apiserver's priority and fairness.
type throttle struct{}

func (throttle) Name() string { return "throttle" }

// Configure lowers the apiserver's total concurrency (default 400 + 200)
// to 90 seats, so that the level's share (1 of about 246 nominal shares)
// rounds up to exactly one seat; every other level keeps several.
func (throttle) Configure(o *cluster.Options) error {
	o.ExtraAPIServerArgs = append(append([]string(nil), o.ExtraAPIServerArgs...), "--max-requests-inflight=60", "--max-mutating-requests-inflight=30")
	return nil
}

func (throttle) Start(ctx context.Context, c *cluster.Cluster, logf func(string, ...any)) (parity.FaultRun, error) {
	fc := c.Client.FlowcontrolV1()
	plc := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: throttleLevel},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent:          ptr.To[int32](0),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type:    flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1},
				},
			},
		},
	}
	if _, err := fc.PriorityLevelConfigurations().Create(ctx, plc, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("chaos: throttle: %w", err)
	}
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: throttleLevel},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: throttleLevel},
			MatchingPrecedence:         throttlePrecedence,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{
					{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "system:kube-controller-manager"}},
					{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "kube-system", Name: "*"}},
				},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"},
				}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	if _, err := fc.FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("chaos: throttle: %w", err)
	}
	// The apiserver's configuration controller picks both up within a
	// second or so; its nominal-limit gauge for the level says it has.
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := scrape(ctx, c)
		if err == nil && m.sum("apiserver_flowcontrol_nominal_limit_seats", throttleLevel) > 0 {
			logf("chaos: throttle: level %s has %v seat(s)", throttleLevel, m.sum("apiserver_flowcontrol_nominal_limit_seats", throttleLevel))
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("chaos: throttle: priority level %s not in use after 30s (last: %v)", throttleLevel, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return &throttleRun{c: c, logf: logf}, nil
}

type throttleRun struct {
	c        *cluster.Cluster
	logf     func(string, ...any)
	rejected float64
}

// maxRetryAfter is the longest Retry-After API Priority and Fairness gives
// a 429 (k8s.io/apiserver's dropped-requests tracker doubles it up to 32 s
// while a level keeps dropping).
const maxRetryAfter = 32 * time.Second

// retryPoll is how often End reads the audit log while it waits for retries.
const retryPoll = time.Second

// End reads how many requests the apiserver rejected for the level,
// deletes the FlowSchema and the level, and then waits until every request
// that got a 429 has been retried: client-go's rest client sleeps for the
// Retry-After before it tries again, so a write rejected just before the
// fault ended (an Event, a pod's delete) would otherwise land after
// parity's settle, whose quiet period is 3 s, had captured the state.
// The audit log does not record a 429's Retry-After, so End watches it for
// the retries themselves (the same request again), and gives up waiting
// maxRetryAfter after the last 429: a caller that gave up on the request
// may never repeat it as it was.
func (r *throttleRun) End(ctx context.Context) error {
	m, err := scrape(ctx, r.c)
	if err != nil {
		return err
	}
	r.rejected = m.sum("apiserver_flowcontrol_rejected_requests_total", throttleLevel)
	r.logf("chaos: throttle: the apiserver rejected %v requests of level %s", r.rejected, throttleLevel)
	fc := r.c.Client.FlowcontrolV1()
	if err := fc.FlowSchemas().Delete(ctx, throttleLevel, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("chaos: throttle: %w", err)
	}
	if err := fc.PriorityLevelConfigurations().Delete(ctx, throttleLevel, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("chaos: throttle: %w", err)
	}
	start := time.Now()
	for {
		w, err := readRetries(r.c.AuditLogPath)
		if err != nil {
			return err
		}
		if w.waiting == 0 || time.Now().After(w.last.Add(maxRetryAfter+time.Second)) {
			if w.waiting > 0 {
				r.logf("chaos: throttle: %d request(s) answered 429 not retried %s after the last 429 (%s)", w.waiting, maxRetryAfter, w.last.Format(time.StampMilli))
			} else {
				r.logf("chaos: throttle: every 429's retry seen after %s", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryPoll):
		}
	}
}

// retries is what an audit log says of the requests answered 429.
type retries struct {
	// last is when the last request answered 429 was received (zero if
	// none was).
	last time.Time
	// waiting counts the 429s not followed by the same request (user, user
	// agent, verb and URI) received later: a retry not yet made.
	waiting int
}

func readRetries(auditLog string) (retries, error) {
	events, err := cluster.ReadAuditEvents(auditLog)
	if err != nil {
		return retries{}, err
	}
	return retriesOf(events), nil
}

func retriesOf(events []cluster.AuditEvent) retries {
	type request struct{ user, agent, verb, uri string }
	keyOf := func(e cluster.AuditEvent) request { return request{e.User.Username, e.UserAgent, e.Verb, e.RequestURI} }
	latest := map[request]time.Time{}
	var throttled []cluster.AuditEvent
	var r retries
	for _, e := range events {
		k := keyOf(e)
		if e.RequestReceivedTimestamp.After(latest[k]) {
			latest[k] = e.RequestReceivedTimestamp
		}
		if e.ResponseStatus != nil && e.ResponseStatus.Code == 429 {
			throttled = append(throttled, e)
			if e.RequestReceivedTimestamp.After(r.last) {
				r.last = e.RequestReceivedTimestamp
			}
		}
	}
	for _, e := range throttled {
		if !latest[keyOf(e)].After(e.RequestReceivedTimestamp) {
			r.waiting++
		}
	}
	return r
}

func (r *throttleRun) Close() error { return nil }

func (r *throttleRun) figures() map[string]float64 {
	return map[string]float64{"apf-rejected": r.rejected}
}

// metricsText is the apiserver's /metrics in the text format.
type metricsText []byte

// scrape reads the apiserver's /metrics as the admin.
func scrape(ctx context.Context, c *cluster.Cluster) (metricsText, error) {
	b, err := c.Client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("chaos: apiserver /metrics: %w", err)
	}
	return b, nil
}

// sum adds the samples of a metric whose priority_level label is level.
func (m metricsText) sum(name, level string) float64 {
	var total float64
	label := `priority_level="` + level + `"`
	s := bufio.NewScanner(bytes.NewReader(m))
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, label) {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			total += v
		}
	}
	return total
}
