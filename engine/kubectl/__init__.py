"""Kubernetes API plumbing shared by the kubectl formatter and the real-cluster substrate.

* :mod:`engine.kubectl.gofmt` -- byte-exact ports of the Go pieces kubectl's output depends on
  (``text/tabwriter``, ``sort.Sort``, ``encoding/json`` indentation, ``HumanDuration``);
* :mod:`engine.kubectl.goyaml` -- the YAML that ``kubectl -o yaml`` writes (``sigs.k8s.io/yaml``);
* :mod:`engine.kubectl.quantity` -- exact resource quantities (``k8s.io/apimachinery`` semantics);
* :mod:`engine.kubectl.apiobjects` -- objects as an API server serves them: defaults, selectors,
  references, EndpointSlices;
* :mod:`engine.kubectl.fakeapi` -- a small read-only Kubernetes API server for tests that run the
  real ``kubectl`` against simulator objects.
"""
