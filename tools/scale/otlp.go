package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// typicalResource is the resource an enabled Setup exports in the worker of
// a typical Slurm task (scalegen.Worker; host name and PID fixed).
func typicalResource(ctx context.Context) (*resource.Resource, error) {
	env := environ.Map(scalegen.Worker())
	cfg, err := lens.FromEnv(lens.WithEnv(env))
	if err != nil {
		return nil, err
	}
	cfg.Enabled = true
	return lens.NewResource(ctx, cfg, lens.WithEnv(env), lens.WithLogger(discardLogger),
		lens.WithDetectOptions(
			detect.WithHostname(func() (string, error) { return "node-0155", nil }),
			detect.WithPID(1234567),
			detect.WithKubernetesSecretsPath("/nonexistent")))
}

// otlpCommand measures the bodies of OTLP/HTTP trace export requests (an
// ExportTraceServiceRequest in protobuf, as the OpenTelemetry Go exporter
// sends it) with the resource of a typical job and with an empty resource,
// for 1 span and for a full default batch of 512 spans, uncompressed and
// gzip-compressed.
func otlpCommand(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("no arguments")
	}
	for _, k := range []string{carrier.EnvVar, "OTEL_SERVICE_NAME"} {
		os.Unsetenv(k)
	}
	ctx := context.Background()
	res, err := typicalResource(ctx)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var (
		mu    sync.Mutex
		sizes []int
	)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sizes = append(sizes, len(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	// export sends one request of n spans and returns its body size.
	export := func(r *resource.Resource, n int, gzip bool) (int, error) {
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(ln.Addr().String()), otlptracehttp.WithInsecure()}
		if gzip {
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		}
		exp, err := otlptracehttp.New(ctx, opts...)
		if err != nil {
			return 0, err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(r),
			sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(n), sdktrace.WithMaxQueueSize(n),
				sdktrace.WithBatchTimeout(time.Hour)))
		tr := tp.Tracer("nemo.lens.train", trace.WithInstrumentationVersion("0.3.0"))
		pctx, parent := tr.Start(ctx, "train")
		for i := range n - 1 {
			_, s := tr.Start(pctx, "train.step", trace.WithAttributes(
				attribute.Int("nv.dl.step", 100000+i),
				attribute.String("nv.dl.phase", "forward"),
				attribute.Float64("train.loss", 2.3456+float64(i)/1e4),
				attribute.Int("train.tokens", 4194304)))
			s.End()
		}
		parent.End()
		mu.Lock()
		before := len(sizes)
		mu.Unlock()
		if err := tp.Shutdown(ctx); err != nil {
			return 0, err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(sizes) != before+1 {
			return 0, fmt.Errorf("%d export requests for %d spans, want 1", len(sizes)-before, n)
		}
		return sizes[len(sizes)-1], nil
	}

	// The SDK's default resource, for comparison: what a process that
	// does not use Lens sends (service.name and telemetry.sdk.*).
	sdkDefault, err := resource.Merge(resource.Default(),
		resource.NewSchemaless(attribute.String("service.name", "nemo")))
	if err != nil {
		return err
	}
	withDefault, err := export(sdkDefault, 1, false)
	if err != nil {
		return err
	}
	withDefaultGzip, err := export(sdkDefault, 1, true)
	if err != nil {
		return err
	}

	type cell struct{ with, without int }
	var table [2][2]cell // [gzip][1 span, 512 spans]
	for g := range 2 {
		for i, n := range []int{1, 512} {
			var c cell
			if c.with, err = export(res, n, g == 1); err != nil {
				return err
			}
			if c.without, err = export(resource.Empty(), n, g == 1); err != nil {
				return err
			}
			table[g][i] = c
		}
	}
	span := func(g int) float64 { return float64(table[g][1].without-table[g][0].without) / 511 }

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "The resource of a typical job — the worker of a Slurm task (rank 1234 of 10,000) started by "+
		"`lens exec --rank-from slurm`, whose carrier is the launcher's with the ranks (%d entries, %d B), as `lens.NewResource` "+
		"builds it: **%d attributes**, %d B of keys and values as text.\n\n",
		carrier.Parse(scalegen.WorkerCarrier).Len(), len(scalegen.WorkerCarrier), res.Len(), textSize(res))
	fmt.Fprintf(w, "Bodies of OTLP/HTTP trace export requests (`ExportTraceServiceRequest`, protobuf, as "+
		"`otlptracehttp` sends them); a span is a child span named `train.step` with 4 attributes (int, string, float, int):\n\n")
	fmt.Fprintf(w, "| | uncompressed | gzip |\n|---|---|---|\n")
	fmt.Fprintf(w, "| **the resource, in every export request** | **%d B** | **%d B** |\n",
		table[0][0].with-table[0][0].without, table[1][0].with-table[1][0].without)
	fmt.Fprintf(w, "| the SDK's default resource (`service.name`, `telemetry.sdk.*`: %d attributes), for comparison | %d B | %d B |\n",
		sdkDefault.Len(), withDefault-table[0][0].without, withDefaultGzip-table[1][0].without)
	fmt.Fprintf(w, "| one span (mean over a batch of 512) | %.0f B | %.0f B |\n", span(0), span(1))
	for i, n := range []int{1, 512} {
		u, z := table[0][i], table[1][i]
		fmt.Fprintf(w, "| export of %d span%s: with the resource / without | %s / %s (resource: %.1f %%) | %s / %s (resource: %.1f %%) |\n",
			n, plural(n), fmtBytes(float64(u.with)), fmtBytes(float64(u.without)), 100*float64(u.with-u.without)/float64(u.with),
			fmtBytes(float64(z.with)), fmtBytes(float64(z.without)), 100*float64(z.with-z.without)/float64(z.with))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "<details><summary>The resource</summary>\n\n```text\n")
	for _, kv := range res.Attributes() {
		fmt.Fprintf(w, "%s=%s\n", kv.Key, kv.Value.String())
	}
	fmt.Fprintf(w, "```\n\n</details>\n\n")
	// Machine-readable figures for the script.
	fmt.Fprintf(os.Stderr, "resource_bytes=%d resource_gzip_bytes=%d sdk_default_bytes=%d sdk_default_gzip_bytes=%d span_bytes=%.0f span_gzip_bytes=%.0f request1_bytes=%d batch512_bytes=%d batch512_gzip_bytes=%d attributes=%d\n",
		table[0][0].with-table[0][0].without, table[1][0].with-table[1][0].without,
		withDefault-table[0][0].without, withDefaultGzip-table[1][0].without,
		span(0), span(1), table[0][0].without, table[0][1].with, table[1][1].with, res.Len())
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// textSize is the length of the resource's keys and values as text.
func textSize(r *resource.Resource) int {
	n := 0
	for _, kv := range r.Attributes() {
		n += len(kv.Key) + len(kv.Value.String())
	}
	return n
}
