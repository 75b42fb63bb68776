package ops

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/prometheus/client_golang/prometheus"
)

// WithQuota wraps st with the per-owner quota of l (AGENT_OWNER_QUOTA_BYTES),
// or returns it as it is when the quota is off. Every file added to the
// store, staged upload or tool output, counts against its owner; ttl is the
// time to live of an area's files. It also returns the quota itself (nil
// when off), which the work meter reserves on.
func WithQuota(st fileserve.Store, l Limits, ttl func(fileserve.Area) time.Duration, reg prometheus.Registerer, refused *prometheus.CounterVec) (fileserve.Store, *quota.Store, error) {
	if l.OwnerQuotaBytes <= 0 {
		return st, nil, nil
	}
	q, err := quota.New(st, quota.Config{
		Limit:   l.OwnerQuotaBytes,
		Refresh: l.QuotaRefresh,
		Setting: "AGENT_OWNER_QUOTA_BYTES",
		TTL:     ttl,
	})
	if err != nil {
		return nil, nil, err
	}
	if err := reg.Register(&quotaCollector{q: q}); err != nil {
		return nil, nil, err
	}
	return &quotaCounted{Store: q, refused: refused.WithLabelValues("quota")}, q, nil
}

// quotaCounted counts the additions the quota refuses in
// agentura_refused_total{reason="quota"}.
type quotaCounted struct {
	*quota.Store
	refused prometheus.Counter
}

func (s *quotaCounted) Put(ctx context.Context, f fileserve.NewFile, r io.Reader) (fileserve.Meta, error) {
	m, err := s.Store.Put(ctx, f, r)
	s.count(err)
	return m, err
}

func (s *quotaCounted) Adopt(ctx context.Context, f fileserve.NewFile, path string) (fileserve.Meta, error) {
	m, err := s.Store.Adopt(ctx, f, path)
	s.count(err)
	return m, err
}

func (s *quotaCounted) count(err error) {
	if errors.Is(err, quota.ErrExceeded) {
		s.refused.Inc()
	}
}

// quotaCollector reports the owners by how much of the quota they use.
type quotaCollector struct{ q *quota.Store }

var (
	quotaOwnersDesc = prometheus.NewDesc("agentura_quota_owners",
		"Owners holding files, by the share of AGENT_OWNER_QUOTA_BYTES they use (class: under_50, 50_to_90, over_90).",
		[]string{"class"}, nil)
	quotaBytesDesc = prometheus.NewDesc("agentura_quota_used_bytes",
		"Bytes the owners hold in the store, by the same classes.", []string{"class"}, nil)
	quotaLimitDesc = prometheus.NewDesc("agentura_quota_limit_bytes",
		"The per-owner quota (AGENT_OWNER_QUOTA_BYTES).", nil, nil)
)

func (c *quotaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- quotaOwnersDesc
	ch <- quotaBytesDesc
	ch <- quotaLimitDesc
}

func (c *quotaCollector) Collect(ch chan<- prometheus.Metric) {
	classes := []string{"under_50", "50_to_90", "over_90"}
	var owners, used [3]float64
	limit := float64(c.q.Limit())
	c.q.EachOwner(func(_ string, n int64) {
		i := 0
		switch share := float64(n) / limit; {
		case share >= 0.9:
			i = 2
		case share >= 0.5:
			i = 1
		}
		owners[i]++
		used[i] += float64(n)
	})
	for i, class := range classes {
		ch <- prometheus.MustNewConstMetric(quotaOwnersDesc, prometheus.GaugeValue, owners[i], class)
		ch <- prometheus.MustNewConstMetric(quotaBytesDesc, prometheus.GaugeValue, used[i], class)
	}
	ch <- prometheus.MustNewConstMetric(quotaLimitDesc, prometheus.GaugeValue, limit)
}
