"""A real etcd + kube-apiserver pair on loopback, for end-to-end tests and benchmarks.

No kube-controller-manager runs, so the apiserver is configured the way upstream's scheduler
integration tests configure theirs: no ServiceAccount admission (nothing creates the default
ServiceAccount), no TaintNodesByCondition (nothing would ever remove the not-ready taint it adds
to new Nodes), no Priority admission (tests set spec.priority directly).

With `audit=True` the apiserver also writes an audit log (see tests/e2e/audit.py) that outlives
restarts of the server; `client_kubeconfig` issues each client a user of its own, so the log
says which process made each request.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from typing import TypeVar

from tests.e2e.api_client import ApiClient
from tests.e2e.audit import AuditLog
from tests.e2e.audit import write_policy
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.certs import CertificateAuthority
from tests.e2e.certs import KeyPair
from tests.e2e.certs import service_account_key_pair
from tests.e2e.kubeconfig import write_kubeconfig
from tests.e2e.processes import ManagedProcess
from tests.e2e.processes import ProcessExitedError
from tests.e2e.processes import free_loopback_port

READY_TIMEOUT_S = 90.0
ETCD_READY_TIMEOUT_S = 30.0
# One readiness probe; short, so that a port squatter that accepts but never answers cannot
# stall start-up for a whole request timeout.
PROBE_TIMEOUT_S = 5.0
START_ATTEMPTS = 3
ADMIN_USER = "admin"
ADMIN_GROUPS = ["system:masters"]
DISABLED_ADMISSION = "ServiceAccount,TaintNodesByCondition,Priority"
# tmpfs keeps etcd's writes off the shared disk; fall back to the normal temp dir elsewhere.
SHM = Path("/dev/shm")

T = TypeVar("T")


class ControlPlaneStartError(RuntimeError):
    """etcd or kube-apiserver did not come up; the message carries the tails of their logs."""


@dataclass(frozen=True)
class _Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int

    @classmethod
    def pick(cls) -> _Ports:
        return cls(free_loopback_port(), free_loopback_port(), free_loopback_port())


class ControlPlane:
    """Starts etcd and kube-apiserver, hands out credentials, and tears everything down."""

    def __init__(
        self,
        binaries: ControlPlaneBinaries,
        extra_apiserver_args: Sequence[str] = (),
        *,
        audit: bool = False,
    ) -> None:
        self.binaries = binaries
        # For tests of alpha APIs (runtime-config, feature gates).
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.audit = audit
        self._work_dir: Path | None = None
        self._etcd_data_dir: Path | None = None
        self._ports: _Ports | None = None
        self._etcd: ManagedProcess | None = None
        self._apiserver: ManagedProcess | None = None
        self._ca: CertificateAuthority | None = None
        self._admin: KeyPair | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Starts etcd and kube-apiserver; on any failure, cleans up before raising."""
        self._work_dir = Path(tempfile.mkdtemp(prefix="kube-pyscheduler-e2e-"))
        try:
            self._write_pki()
            self._start_processes()
            self._write_admin_kubeconfig()
        except BaseException:
            self.stop()
            raise

    def _start_processes(self) -> None:
        """Retries with fresh ports when one was taken between picking and binding it."""
        for attempt in range(1, START_ATTEMPTS + 1):
            self._ports = _Ports.pick()
            try:
                self._start_etcd()
                self._start_apiserver()
            except (ProcessExitedError, TimeoutError) as err:
                logs = self.logs_tail()
                self._stop_processes()
                if attempt < START_ATTEMPTS and "address already in use" in logs:
                    continue
                raise ControlPlaneStartError(f"{err} (attempt {attempt})\n{logs}") from err
            return

    def stop(self) -> None:
        """Stops kube-apiserver, then etcd, and removes every file the plane created."""
        self._stop_processes()
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            self._work_dir = None

    def restart_apiserver(self, *, grace_s: float = 30.0) -> None:
        """Stops kube-apiserver and starts it again on the same port against the same etcd.

        On SIGTERM the server stops listening at once but keeps open watch connections until
        they end or its own shutdown timeout passes; after `grace_s` it is killed.
        """
        apiserver = self._require(self._apiserver)
        apiserver.stop(grace_s)
        apiserver.start()
        try:
            self._wait_for_apiserver(apiserver)
        except (ProcessExitedError, TimeoutError) as err:
            raise ControlPlaneStartError(f"restart failed: {err}\n{self.logs_tail()}") from err

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ----------------------------------------------------------------- access

    @property
    def server_url(self) -> str:
        return f"https://127.0.0.1:{self._require(self._ports).apiserver}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self._require(self._ports).etcd_client}"

    @property
    def work_dir(self) -> Path:
        return self._require(self._work_dir)

    @property
    def ca_path(self) -> Path:
        return self.work_dir / "pki" / "ca.crt"

    @property
    def audit_log_path(self) -> Path:
        if not self.audit:
            raise RuntimeError("the control plane was started without an audit log")
        return self.work_dir / "audit.log"

    def audit_log(self) -> AuditLog:
        return AuditLog(self.audit_log_path)

    @property
    def kubeconfig_path(self) -> Path:
        """An admin (system:masters) kubeconfig with the certificates embedded."""
        return self.work_dir / "admin.kubeconfig"

    @property
    def certificate_authority(self) -> CertificateAuthority:
        """The CA that signs the plane's certificates; kube-apiserver's client CA too."""
        return self._require(self._ca)

    @property
    def admin_cert_paths(self) -> tuple[Path, Path]:
        """The admin's client certificate and key (user admin, group system:masters)."""
        pki = self.work_dir / "pki"
        return pki / "admin.crt", pki / "admin.key"

    def admin_client(self) -> ApiClient:
        return ApiClient(self.server_url, self.ca_path, client_cert=self.admin_cert_paths)

    def token_client(self, token: str) -> ApiClient:
        return ApiClient(self.server_url, self.ca_path, token=token)

    def service_account_token(
        self, namespace: str, name: str, *, expiration_seconds: int = 3600
    ) -> str:
        """Issues a token through the TokenRequest API, creating the ServiceAccount if missing.

        This needs no kube-controller-manager: kube-apiserver signs the token itself with the
        configured service-account key.
        """
        admin = self.admin_client()
        created = admin.post(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
        )
        if created.status not in {201, 409}:
            raise RuntimeError(f"creating ServiceAccount {namespace}/{name}: {created}")
        request: dict[str, Any] = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": expiration_seconds},
        }
        issued = admin.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", request)
        if issued.status != 201:
            raise RuntimeError(f"TokenRequest for {namespace}/{name}: {issued}")
        token: str = issued.body["status"]["token"]
        return token

    def client_kubeconfig(
        self, user: str, groups: list[str], *, server_url: str | None = None
    ) -> Path:
        """A kubeconfig with a fresh client certificate for `user` in `groups`, for the
        apiserver or for `server_url` (a proxy in front of it, say)."""
        ca = self._require(self._ca)
        pair = ca.issue_client(user, groups)
        return write_kubeconfig(
            self.work_dir / f"{user}.kubeconfig",
            server_url=server_url or self.server_url,
            ca_pem=ca.cert_pem,
            user=user,
            client_cert_pem=pair.cert_pem,
            client_key_pem=pair.key_pem,
        )

    def make_user_kubeconfig(self, token: str, *, user: str = "user") -> Path:
        """A kubeconfig that authenticates with a bearer token (e.g. a ServiceAccount's)."""
        ca = self._require(self._ca)
        path = self.work_dir / f"{user}.kubeconfig"
        return write_kubeconfig(
            path, server_url=self.server_url, ca_pem=ca.cert_pem, user=user, token=token
        )

    def logs_tail(self, lines: int = 40) -> str:
        """The last lines of each process log, for failure messages and reports."""
        parts = []
        for process in (self._etcd, self._apiserver):
            if process is not None:
                parts.append(f"--- {process.log_path.name} (last {lines} lines) ---")
                parts.append(process.log_tail(lines))
        return "\n".join(parts)

    # ----------------------------------------------------------------- internals

    def _write_pki(self) -> None:
        pki = self.work_dir / "pki"
        pki.mkdir()
        ca = CertificateAuthority.create()
        self.ca_path.write_bytes(ca.cert_pem)
        ca.issue_serving(["localhost"], ["127.0.0.1"]).write(
            pki / "serving.crt", pki / "serving.key"
        )
        self._admin = ca.issue_client(ADMIN_USER, ADMIN_GROUPS)
        self._admin.write(pki / "admin.crt", pki / "admin.key")
        service_account_key_pair().write(pki / "sa.pub", pki / "sa.key")
        self._ca = ca

    def _write_admin_kubeconfig(self) -> None:
        ca, admin = self._require(self._ca), self._require(self._admin)
        write_kubeconfig(
            self.kubeconfig_path,
            server_url=self.server_url,
            ca_pem=ca.cert_pem,
            user=ADMIN_USER,
            client_cert_pem=admin.cert_pem,
            client_key_pem=admin.key_pem,
        )

    def _start_etcd(self) -> None:
        ports = self._require(self._ports)
        parent = SHM if SHM.is_dir() else None
        self._etcd_data_dir = Path(tempfile.mkdtemp(prefix="kube-pyscheduler-etcd-", dir=parent))
        peer_url = f"http://127.0.0.1:{ports.etcd_peer}"
        argv = [
            str(self.binaries.etcd),
            "--name=e2e",
            f"--data-dir={self._etcd_data_dir}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=e2e={peer_url}",
            # The data is thrown away after the run; durability buys nothing here.
            "--unsafe-no-fsync=true",
            "--quota-backend-bytes=4294967296",
            "--log-level=warn",
        ]
        self._etcd = ManagedProcess("etcd", argv, self.work_dir / "etcd.log")
        self._etcd.start()
        probe = ApiClient(self.etcd_url)
        self._etcd.wait_until(lambda: _probe(probe, "/health"), ETCD_READY_TIMEOUT_S, "/health")

    def _start_apiserver(self) -> None:
        ports, pki = self._require(self._ports), self.work_dir / "pki"
        argv = [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={ports.apiserver}",
            f"--tls-cert-file={pki / 'serving.crt'}",
            f"--tls-private-key-file={pki / 'serving.key'}",
            f"--client-ca-file={self.ca_path}",
            "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-issuer={self.server_url}/",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--authorization-mode=Node,RBAC",
            f"--disable-admission-plugins={DISABLED_ADMISSION}",
            "--allow-privileged=true",
            # Otherwise it writes 127.0.0.1 into the `kubernetes` Service endpoints every 10 s and
            # logs the validation error (loopback is not allowed there). Tests never use them.
            "--endpoint-reconciler-type=none",
            "--profiling=false",
            "-v=1",
            *self.extra_apiserver_args,
            *self._audit_flags(),
        ]
        self._apiserver = ManagedProcess(
            "kube-apiserver", argv, self.work_dir / "kube-apiserver.log"
        )
        self._apiserver.start()
        self._wait_for_apiserver(self._apiserver)

    def _audit_flags(self) -> list[str]:
        if not self.audit:
            return []
        policy = write_policy(self.work_dir / "audit-policy.yaml")
        return [
            f"--audit-policy-file={policy}",
            f"--audit-log-path={self.audit_log_path}",
            # Rotation would split the record of one run across files; a run writes a few MB.
            "--audit-log-maxsize=1024",
            # Records are written as each request completes, not batched in memory: a server
            # stopped mid-run loses none of them.
            "--audit-log-mode=blocking",
        ]

    def _wait_for_apiserver(self, apiserver: ManagedProcess) -> None:
        admin = self.admin_client()
        apiserver.wait_until(lambda: _probe(admin, "/readyz"), READY_TIMEOUT_S, "/readyz")
        # The system-namespaces controller can lag behind readiness on a fresh etcd.
        apiserver.wait_until(
            lambda: _probe(admin, "/api/v1/namespaces/default"),
            READY_TIMEOUT_S,
            "namespace default",
        )

    def _stop_processes(self) -> None:
        for process in (self._apiserver, self._etcd):
            if process is not None:
                process.stop()
        if self._etcd_data_dir is not None:
            shutil.rmtree(self._etcd_data_dir, ignore_errors=True)
            self._etcd_data_dir = None

    @staticmethod
    def _require(value: T | None) -> T:
        if value is None:
            raise RuntimeError("the control plane is not started")
        return value


def _probe(client: ApiClient, path: str) -> bool:
    return client.request("GET", path, timeout_s=PROBE_TIMEOUT_S).status == 200
