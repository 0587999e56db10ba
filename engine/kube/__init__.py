"""Kubernetes for real: the Kubernetes API in front of any substrate, and a substrate over any cluster.

* :mod:`engine.kube.protocol` -- the contract between the API server and whoever executes its
  writes (:class:`~engine.kube.protocol.Mutator`), and the typed writes it hands over.
* :mod:`engine.kube.apiserver` -- :class:`~engine.kube.apiserver.KubeAPIServer`, an aiohttp
  Kubernetes API server over a :class:`~engine.substrate.Substrate` (discovery, tables, list,
  watch, logs, metrics.k8s.io, writes through a Mutator), with its pieces:
  :mod:`engine.kube.resources` (the served resources and discovery documents),
  :mod:`engine.kube.tables` (server-side ``Table`` output from :mod:`engine.kubectl.printers`),
  :mod:`engine.kube.tls` (the loopback certificate: kubectl sends tokens only over TLS),
  :mod:`engine.kube.kubeconfig` (``write_kubeconfig``) and :mod:`engine.kube.protobuf` (the
  protobuf bodies kubectl sends for access reviews).
* :mod:`engine.kube.patching` -- strategic-merge, merge and JSON patches of Deployments turned
  into :class:`~engine.kube.protocol.DeploymentChange`.
* :mod:`engine.kube.admin` -- the cluster administrator's Mutator: writes executed on a substrate.
* :mod:`engine.kube.substrate` -- :class:`~engine.kube.substrate.KubeSubstrate`, a substrate over
  a real cluster through the official ``kubernetes`` client (the only package that imports it).
"""
