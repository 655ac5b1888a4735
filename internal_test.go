package lens

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
)

func TestSDKOnlyKeys(t *testing.T) {
	t.Parallel()
	res := resource.NewSchemaless(attribute.String("a", "1"), attribute.String("c", "2"), attribute.String("k", "v"))
	got := sdkOnlyKeys(" a=1, \x1fk=v,b,=x, c =2 ,\x1fk=w,\x1ck\x1d=z,d=%zz,", res)
	want := []string{`"\x1ck\x1d"`, `"\x1fk"`, `"d"`}
	if len(got) != len(want) {
		t.Fatalf("sdkOnlyKeys = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sdkOnlyKeys = %q, want %q", got, want)
		}
	}
	if got := sdkOnlyKeys("", res); len(got) != 0 {
		t.Errorf("empty carrier: %q", got)
	}
}
