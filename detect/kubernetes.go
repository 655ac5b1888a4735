package detect

import (
	"context"
	"os"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/lensconv"
)

// DefaultKubernetesSecretsPath is the directory whose existence marks a
// Kubernetes pod. Detection only checks that it exists; it never reads it
// (in particular never the service-account token).
const DefaultKubernetesSecretsPath = "/var/run/secrets/kubernetes.io"

const (
	envKubernetesServiceHost = "KUBERNETES_SERVICE_HOST"
	envK8sNamespace          = "K8S_NAMESPACE"
	envK8sPodName            = "K8S_POD_NAME"
	envHostname              = "HOSTNAME"
	envK8sPodUID             = "K8S_POD_UID"
	envK8sNodeName           = "K8S_NODE_NAME"
	envK8sContainerName      = "K8S_CONTAINER_NAME"
	envK8sJobName            = "K8S_JOB_NAME"
)

// Kubernetes returns the Kubernetes attributes, the reference's
// detect_kubernetes (docs/detection.md#detect-kubernetes). It is active iff
// KUBERNETES_SERVICE_HOST is non-empty or the path of
// [WithKubernetesSecretsPath] (default [DefaultKubernetesSecretsPath])
// exists, whatever its file type (a dangling symbolic link does not count,
// as with Python's os.path.exists); inactive gives an empty map. Nothing is
// read from the path and nothing touches the network or the API server.
//
// Keys, in this order, each from its variable; empty values are skipped and
// nothing is trimmed:
//
//	k8s.namespace.name  K8S_NAMESPACE
//	k8s.pod.name        K8S_POD_NAME; when absent or empty, HOSTNAME
//	k8s.pod.uid         K8S_POD_UID
//	k8s.node.name       K8S_NODE_NAME
//	k8s.container.name  K8S_CONTAINER_NAME
//	k8s.job.name        K8S_JOB_NAME
//
// Active with nothing set gives an empty map. The docs phrase the HOSTNAME
// fallback as "only when unset"; like the reference implementation, an empty
// K8S_POD_NAME counts as unset.
//
// Options used: WithEnv, WithKubernetesSecretsPath, WithExplanation. ctx is
// not consulted (nothing blocks); it is there for symmetry with [Local].
func Kubernetes(_ context.Context, opts ...Option) *attr.Map {
	c := newConfig(opts)
	m := &attr.Map{}
	kubernetesInto(&c, m)
	return m
}

// kubernetesActive reports whether KUBERNETES_SERVICE_HOST is non-empty or
// the secrets path exists (os.Stat: any file type, symbolic links followed,
// nothing opened).
func kubernetesActive(c *config) bool {
	if _, ok := environ.NonEmpty(c.env, envKubernetesServiceHost); ok {
		return true
	}
	path := c.secretsPath
	if path == "" {
		path = DefaultKubernetesSecretsPath
	}
	_, err := os.Stat(path)
	return err == nil
}

func kubernetesInto(c *config, m *attr.Map) {
	if !kubernetesActive(c) {
		return
	}
	env := c.env
	e := c.explain
	set := func(key string, names ...string) {
		for _, name := range names {
			if v, ok := environ.NonEmpty(env, name); ok {
				m.Set(key, attr.String(v))
				if e != nil {
					e.Record(key, "env "+name)
				}
				return
			}
		}
	}
	set(lensconv.K8sNamespaceName, envK8sNamespace)
	set(lensconv.K8sPodName, envK8sPodName, envHostname)
	set(lensconv.K8sPodUID, envK8sPodUID)
	set(lensconv.K8sNodeName, envK8sNodeName)
	set(lensconv.K8sContainerName, envK8sContainerName)
	set(lensconv.K8sJobName, envK8sJobName)
}
