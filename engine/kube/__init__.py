"""Kubernetes API plumbing shared by the kubectl formatter and the real-cluster substrate.

* :mod:`engine.kube.gofmt` -- byte-exact ports of the Go pieces kubectl's output depends on
  (``text/tabwriter``, ``sort.Sort``, ``encoding/json`` indentation, ``HumanDuration``);
* :mod:`engine.kube.goyaml` -- the YAML that ``kubectl -o yaml`` writes (``sigs.k8s.io/yaml``);
* :mod:`engine.kube.quantity` -- exact resource quantities (``k8s.io/apimachinery`` semantics);
* :mod:`engine.kube.apiobjects` -- objects as an API server serves them: defaults, selectors,
  references, EndpointSlices;
* :mod:`engine.kube.fakeapi` -- a small read-only Kubernetes API server for tests that run the
  real ``kubectl`` against simulator objects.
"""
