package lens_test

import (
	"errors"
	"strings"
	"testing"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/pytext"
)

type fromEnvCase struct {
	name             string
	env              environ.Map
	prefix, fallback string
	want             func(*lens.Config) // applied to DefaultConfig()
	errVars          []string           // variables named by ConfigErrors, in order
}

var fromEnvCases = []fromEnvCase{
	{name: "empty-environment-gives-defaults", env: environ.Map{}},
	{
		name: "all-keys",
		env: environ.Map{
			"NEMO_LENS_ENABLED": "true", "NEMO_LENS_TRACES_ENABLED": "0", "NEMO_LENS_METRICS_ENABLED": "off",
			"NEMO_LENS_LOGS_ENABLED": "YES", "NEMO_LENS_SPAN_GROUPS": "default,nccl", "NEMO_LENS_EXPORTER": "console",
			"NEMO_LENS_RUN_ID": "exp-1", "NEMO_LENS_USER_ID": "alice",
			"OTEL_SERVICE_NAME": "trainer", "WANDB_ENTITY": "team", "WANDB_PROJECT": "proj",
		},
		want: func(c *lens.Config) {
			*c = lens.Config{Enabled: true, TracesDisabled: true, MetricsDisabled: true, LogsEnabled: true, SpanGroups: "default,nccl", Exporter: "console",
				RunID: "exp-1", User: "alice", ServiceName: "trainer", WandbEntity: "team", WandbProject: "proj"}
		},
	},
	{
		name: "values-are-trimmed-with-the-python-set",
		env: environ.Map{"NEMO_LENS_ENABLED": " \x1fOn\u00a0", "NEMO_LENS_RUN_ID": "\t r1 \n",
			"NEMO_LENS_EXPORTER": " otlp ", "OTEL_SERVICE_NAME": "\u3000svc\x1c"},
		want: func(c *lens.Config) { c.Enabled = true; c.RunID = "r1"; c.ServiceName = "svc" },
	},
	{
		name: "wandb-not-trimmed",
		env:  environ.Map{"WANDB_ENTITY": " team ", "WANDB_PROJECT": ""},
		want: func(c *lens.Config) { c.WandbEntity = " team " },
	},
	{
		name: "blank-service-name-means-nemo",
		env:  environ.Map{"OTEL_SERVICE_NAME": "  "},
	},
	{
		name:   "custom-prefix",
		env:    environ.Map{"MY_ENABLED": "1", "NEMO_LENS_RUN_ID": "ignored", "MY_RUN_ID": "mine"},
		prefix: "MY",
		want:   func(c *lens.Config) { c.Enabled = true; c.RunID = "mine" },
	},
	{
		name:     "fallback-prefix-when-empty-or-absent",
		env:      environ.Map{"APP_ENABLED": " ", "LEGACY_ENABLED": "true", "LEGACY_RUN_ID": "old", "APP_USER_ID": "u", "LEGACY_USER_ID": "legacy-u"},
		prefix:   "APP",
		fallback: "LEGACY",
		want:     func(c *lens.Config) { c.Enabled = true; c.RunID = "old"; c.User = "u" },
	},
	{
		name:     "primary-false-is-not-empty",
		env:      environ.Map{"NEMO_LENS_TRACES_ENABLED": "false", "LEGACY_TRACES_ENABLED": "true"},
		fallback: "LEGACY",
		want:     func(c *lens.Config) { c.TracesDisabled = true },
	},
	{
		name: "boolean-spellings",
		env: environ.Map{"NEMO_LENS_ENABLED": "TrUe", "NEMO_LENS_TRACES_ENABLED": "No",
			"NEMO_LENS_METRICS_ENABLED": "ON", "NEMO_LENS_LOGS_ENABLED": "1"},
		want: func(c *lens.Config) { c.Enabled = true; c.TracesDisabled = true; c.LogsEnabled = true },
	},
	{
		name:    "invalid-boolean",
		env:     environ.Map{"NEMO_LENS_ENABLED": "maybe", "NEMO_LENS_RUN_ID": "r"},
		want:    func(c *lens.Config) { c.RunID = "r" },
		errVars: []string{"NEMO_LENS_ENABLED"},
	},
	{
		name:    "every-invalid-boolean-is-reported",
		env:     environ.Map{"NEMO_LENS_ENABLED": "2", "NEMO_LENS_LOGS_ENABLED": "enabled", "NEMO_LENS_METRICS_ENABLED": "y"},
		errVars: []string{"NEMO_LENS_ENABLED", "NEMO_LENS_METRICS_ENABLED", "NEMO_LENS_LOGS_ENABLED"},
	},
	{
		name:     "invalid-fallback-names-the-fallback-variable",
		env:      environ.Map{"OLD_ENABLED": "ja"},
		fallback: "OLD",
		errVars:  []string{"OLD_ENABLED"},
	},
	{
		name: "exporter-not-validated-here",
		env:  environ.Map{"NEMO_LENS_EXPORTER": "zipkin"},
		want: func(c *lens.Config) { c.Exporter = "zipkin" },
	},
	{
		name: "rank-variables-are-not-configuration",
		env:  environ.Map{"RANK": "3", "WORLD_SIZE": "8"},
	},
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range fromEnvCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := lens.DefaultConfig()
			if tc.want != nil {
				tc.want(&want)
			}
			got, err := lens.FromEnv(lens.WithEnv(tc.env), lens.WithPrefix(tc.prefix), lens.WithFallbackPrefix(tc.fallback))
			if got != want {
				t.Errorf("config\n got %+v\nwant %+v", got, want)
			}
			var vars []string
			for _, e := range unjoin(err) {
				var ce *lens.ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("error %v is not a *ConfigError", e)
				}
				if !errors.Is(e, lens.ErrInvalidBool) {
					t.Errorf("error %v does not wrap ErrInvalidBool", e)
				}
				if v, _ := tc.env.LookupEnv(ce.Var); v != ce.Value {
					t.Errorf("ConfigError.Value = %q, want %q", ce.Value, v)
				}
				if !strings.Contains(e.Error(), ce.Var) || !strings.Contains(e.Error(), ce.Value) {
					t.Errorf("message %q does not name the variable and value", e.Error())
				}
				vars = append(vars, ce.Var)
			}
			if strings.Join(vars, ",") != strings.Join(tc.errVars, ",") {
				t.Errorf("errors for %v, want %v (err %v)", vars, tc.errVars, err)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	want := lens.Config{ServiceName: "nemo", SpanGroups: "default", Exporter: "otlp"}
	if got := lens.DefaultConfig(); got != want {
		t.Errorf("DefaultConfig() = %+v", got)
	}
}

// FuzzFromEnvBool: any value of a boolean variable either parses to
// one of the documented spellings or gives a ConfigError naming it.
func FuzzFromEnvBool(f *testing.F) {
	for _, tc := range fromEnvCases {
		for _, v := range tc.env {
			f.Add(v)
		}
	}
	f.Fuzz(func(t *testing.T, value string) {
		cfg, err := lens.FromEnv(lens.WithEnv(environ.Map{"X_ENABLED": value}), lens.WithPrefix("X"))
		trimmed := strings.ToLower(pytext.TrimSpace(value))
		switch trimmed {
		case "", "0", "false", "no", "off":
			if err != nil || cfg.Enabled {
				t.Fatalf("%q: Enabled %v err %v", value, cfg.Enabled, err)
			}
		case "1", "true", "yes", "on":
			if err != nil || !cfg.Enabled {
				t.Fatalf("%q: Enabled %v err %v", value, cfg.Enabled, err)
			}
		default:
			var ce *lens.ConfigError
			if !errors.As(err, &ce) || ce.Var != "X_ENABLED" || ce.Value != value || cfg.Enabled {
				t.Fatalf("%q: want a ConfigError, got %v (Enabled %v)", value, err, cfg.Enabled)
			}
		}
	})
}
