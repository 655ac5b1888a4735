package lensprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/lensconv"
)

// maxInflight bounds the reads of /proc running at once in the background.
const maxInflight = 8

// lensProcessor stamps the job of the sending process on each resource.
// One instance serves the traces, metrics and logs pipelines of one
// component (see factory.go).
type lensProcessor struct {
	cfg      *Config
	logger   *zap.Logger
	fs       procFS
	hostname string
	cache    *lru[int, *cached]
	res      *resolver
	usePidfd bool
	gpu      *gpuIndex

	mu       sync.Mutex
	inflight map[procKey]chan struct{}
	sem      chan struct{}

	startOnce, stopOnce sync.Once
}

func newLensProcessor(cfg *Config, logger *zap.Logger) *lensProcessor {
	host := cfg.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	fsys := procFS{root: cfg.ProcRoot, maxEnviron: cfg.MaxEnvironBytes}
	p := &lensProcessor{
		cfg:      cfg,
		logger:   logger,
		fs:       fsys,
		hostname: host,
		cache:    newLRU[int](cfg.CacheSize, func(c *cached) { closePidfd(c.pidfd) }),
		usePidfd: filepath.Clean(cfg.ProcRoot) == DefaultProcRoot,
		res:      newResolver(fsys, cfg.RankFrom, host, logger, cfg.CacheSize),
		inflight: map[procKey]chan struct{}{},
		sem:      make(chan struct{}, maxInflight),
	}
	if cfg.GPU.Enabled {
		p.gpu = newGPUIndex(p)
	}
	return p
}

func (p *lensProcessor) start(context.Context, component.Host) error {
	p.startOnce.Do(func() {
		if p.gpu != nil {
			p.gpu.start()
		}
	})
	return nil
}

func (p *lensProcessor) shutdown(context.Context) error {
	p.stopOnce.Do(func() {
		if p.gpu != nil {
			p.gpu.stop()
		}
	})
	return nil
}

func (p *lensProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		p.stamp(ctx, rss.At(i).Resource())
	}
	return td, nil
}

func (p *lensProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		p.stamp(ctx, rls.At(i).Resource())
	}
	return ld, nil
}

func (p *lensProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		p.stamp(ctx, rm.Resource())
		if p.gpu != nil {
			p.gpu.process(rm)
		}
	}
	return md, nil
}

// stamp sets on res every job attribute of its process that res does not
// already have: the process is res's process.pid, on this node (host.name
// absent or this node's name).
func (p *lensProcessor) stamp(ctx context.Context, res pcommon.Resource) {
	attrs := res.Attributes()
	pid, ok := resourcePID(attrs)
	if !ok {
		return
	}
	if h, ok := attrs.Get(lensconv.HostName); ok && !p.sameHost(h.AsString()) {
		return
	}
	info := p.lookup(ctx, pid)
	if info == nil {
		return
	}
	attrs.EnsureCapacity(attrs.Len() + len(info.attrs))
	for _, e := range info.attrs {
		if _, has := attrs.Get(e.Key); !has {
			putValue(attrs, e.Key, e.Value)
		}
	}
}

// sameHost reports whether name is this node: equal, or equal up to the
// first dot (a short name against a fully qualified one).
func (p *lensProcessor) sameHost(name string) bool {
	if name == p.hostname {
		return true
	}
	a, _, _ := strings.Cut(name, ".")
	b, _, _ := strings.Cut(p.hostname, ".")
	return a != "" && a == b
}

// resourcePID reads process.pid, an int (or a decimal string).
func resourcePID(attrs pcommon.Map) (int, bool) {
	v, ok := attrs.Get(lensconv.ProcessPID)
	if !ok {
		return 0, false
	}
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeStr:
		var err error
		if n, err = strconv.ParseInt(v.Str(), 10, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if n < 1 || n > 1<<22 {
		return 0, false
	}
	return int(n), true
}

func putValue(m pcommon.Map, key string, v attr.Value) {
	switch v.Kind() {
	case attr.KindString:
		m.PutStr(key, v.AsString())
	case attr.KindInt64:
		m.PutInt(key, v.AsInt64())
	case attr.KindFloat64:
		m.PutDouble(key, v.AsFloat64())
	case attr.KindBool:
		m.PutBool(key, v.AsBool())
	}
}

// cached is the job of one process: the pid's entry of the cache, valid
// for the process of that start time only.
type cached struct {
	start uint64
	pidfd int // a handle on that very process, -1 when none
	info  *jobInfo
}

// lookup returns the job of pid. A cached entry serves only the process it
// was read for: with a pidfd (proc_root /proc, Linux 5.3+) one signal-0
// call proves that process still holds the pid, else /proc/<pid>/stat's
// start time must be the entry's. A miss is read from procfs in the
// background, waited for at most resolve_timeout (a slower read serves
// later batches). nil: the process is gone, or its read is not done yet.
func (p *lensProcessor) lookup(ctx context.Context, pid int) *jobInfo {
	c, ok := p.cache.get(pid, func(c *cached) bool { return c.pidfd < 0 || pidfdAlive(c.pidfd) })
	if ok && c.pidfd >= 0 {
		return c.info
	}
	st, err := p.fs.stat(pid)
	if err != nil {
		return nil
	}
	if ok && c.start == st.start {
		return c.info
	}
	k := procKey{pid: pid, start: st.start}
	done := p.resolveAsync(k)
	if done == nil || p.cfg.ResolveTimeout <= 0 {
		return nil
	}
	t := time.NewTimer(p.cfg.ResolveTimeout)
	defer t.Stop()
	select {
	case <-done:
		if c, ok := p.cache.get(pid, nil); ok && c.start == k.start {
			return c.info
		}
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// resolveAsync starts reading k's process unless a read of it is running
// (then it returns that read's channel) or maxInflight reads are running
// (then nil: a /proc that hangs never piles up goroutines).
func (p *lensProcessor) resolveAsync(k procKey) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.inflight[k]; ok {
		return ch
	}
	select {
	case p.sem <- struct{}{}:
	default:
		return nil
	}
	ch := make(chan struct{})
	p.inflight[k] = ch
	go func() {
		// The read outlives the batch that asked for it.
		fd := -1
		if p.usePidfd {
			// The pidfd is of k's process if the start time read after
			// opening it is still k's.
			if fd = openPidfd(k.pid); fd >= 0 {
				if st, err := p.fs.stat(k.pid); err != nil || st.start != k.start {
					closePidfd(fd)
					fd = -1
				}
			}
		}
		info := p.res.resolve(context.Background(), k.pid)
		p.cache.add(k.pid, &cached{start: k.start, pidfd: fd, info: info})
		p.mu.Lock()
		delete(p.inflight, k)
		p.mu.Unlock()
		<-p.sem
		close(ch)
	}()
	return ch
}
