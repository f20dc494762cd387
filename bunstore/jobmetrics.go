package bunstore

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// jobMetrics count the background jobs the worker finishes, from River's
// event stream (nothing is read from the database).
type jobMetrics struct {
	finished *prometheus.CounterVec
	run      *prometheus.HistogramVec
	wait     *prometheus.HistogramVec
}

func newJobMetrics(reg prometheus.Registerer) *jobMetrics {
	m := &jobMetrics{
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platformapi_jobs_finished_total",
			Help: "Background job attempts that ended, by job kind and outcome (completed, retryable, " +
				"discarded, cancelled, snoozed)."}, []string{"kind", "outcome"}),
		run: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "platformapi_job_run_seconds",
			Help: "Time a background job attempt ran, by job kind.", Buckets: prometheus.DefBuckets}, []string{"kind"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "platformapi_job_queue_wait_seconds",
			Help: "Time a background job waited to start once available, by job kind.", Buckets: prometheus.DefBuckets},
			[]string{"kind"}),
	}
	reg.MustRegister(m.finished, m.run, m.wait)
	return m
}

// consume records every event until the subscription ends.
func (m *jobMetrics) consume(events <-chan *river.Event) {
	for ev := range events {
		if ev.Job == nil {
			continue
		}
		kind := ev.Job.Kind
		m.finished.WithLabelValues(kind, outcome(ev)).Inc()
		if ev.JobStats != nil {
			m.run.WithLabelValues(kind).Observe(ev.JobStats.RunDuration.Seconds())
			m.wait.WithLabelValues(kind).Observe(ev.JobStats.QueueWaitDuration.Seconds())
		}
	}
}

func outcome(ev *river.Event) string {
	switch ev.Kind {
	case river.EventKindJobCompleted:
		return "completed"
	case river.EventKindJobCancelled:
		return "cancelled"
	case river.EventKindJobSnoozed:
		return "snoozed"
	}
	if ev.Job.State == rivertype.JobStateDiscarded {
		return "discarded"
	}
	return "retryable"
}
