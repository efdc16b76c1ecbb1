# SPDX-License-Identifier: Apache-2.0
"""kubelet.py: plays the kubelet's part towards a CRI runtime, one call per run.

  kubelet.py run-pod NAME UID NAMESPACE CGROUP_PARENT   prints the sandbox id
  kubelet.py create SANDBOX NAME ATTEMPT COMMAND...     prints the container id
  kubelet.py start|remove ID
  kubelet.py stop ID [TIMEOUT]
  kubelet.py pid ID                                     the container's init pid
  kubelet.py wait-exited ID                             waits (10 s at most)
  kubelet.py stop-pod|remove-pod SANDBOX

Environment: CRI_ENDPOINT (unix:///path), CRI_STUBS (where api_pb2*.py were
generated from tests/e2e/cri/api.proto), KUBELET_DIR (where each sandbox's
config is kept for its containers, as the kubelet keeps it), CRI_IMAGE.
Sandboxes share the node's network namespace and have no hostname, as on a
machine without a pod network; their containers get their own pid namespace.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.environ["CRI_STUBS"])
import grpc  # noqa: E402
import api_pb2 as cri  # noqa: E402
import api_pb2_grpc as cri_grpc  # noqa: E402

# A runtime's bound, tests/lib/wait.sh's WAIT_RUNTIME.
TIMEOUT_S = int(os.environ["WAIT_RUNTIME"])


def runtime():
    channel = grpc.insecure_channel(os.environ["CRI_ENDPOINT"])
    return cri_grpc.RuntimeServiceStub(channel)


def sandbox_config_path(sandbox):
    return os.path.join(os.environ["KUBELET_DIR"], sandbox + ".json")


def sandbox_config(name, uid, namespace, cgroup_parent):
    return cri.PodSandboxConfig(
        metadata=cri.PodSandboxMetadata(name=name, uid=uid, namespace=namespace),
        log_directory=os.path.join(os.environ["KUBELET_DIR"], "logs", uid),
        labels={"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": namespace,
                "io.kubernetes.pod.uid": uid},
        linux=cri.LinuxPodSandboxConfig(
            cgroup_parent=cgroup_parent,
            security_context=cri.LinuxSandboxSecurityContext(
                namespace_options=cri.NamespaceOption(network=cri.NODE, pid=cri.CONTAINER))))


def run_pod(name, uid, namespace, cgroup_parent):
    args = [name, uid, namespace, cgroup_parent]
    os.makedirs(os.path.join(os.environ["KUBELET_DIR"], "logs", uid), exist_ok=True)
    reply = runtime().RunPodSandbox(
        cri.RunPodSandboxRequest(config=sandbox_config(*args)), timeout=TIMEOUT_S)
    with open(sandbox_config_path(reply.pod_sandbox_id), "w") as f:
        json.dump(args, f)
    print(reply.pod_sandbox_id)


def create(sandbox, name, attempt, *command):
    with open(sandbox_config_path(sandbox)) as f:
        config = sandbox_config(*json.load(f))
    reply = runtime().CreateContainer(cri.CreateContainerRequest(
        pod_sandbox_id=sandbox, sandbox_config=config,
        config=cri.ContainerConfig(
            metadata=cri.ContainerMetadata(name=name, attempt=int(attempt)),
            image=cri.ImageSpec(image=os.environ["CRI_IMAGE"]),
            command=list(command),
            log_path="%s/%s.log" % (name, attempt),
            labels={"io.kubernetes.container.name": name},
            linux=cri.LinuxContainerConfig(
                security_context=cri.LinuxContainerSecurityContext(
                    namespace_options=cri.NamespaceOption(network=cri.NODE,
                                                          pid=cri.CONTAINER))))),
        timeout=TIMEOUT_S)
    print(reply.container_id)


def status(container):
    return runtime().ContainerStatus(
        cri.ContainerStatusRequest(container_id=container, verbose=True), timeout=TIMEOUT_S)


def pid(container):
    print(json.loads(status(container).info["info"])["pid"])


def wait_exited(container):
    deadline = time.monotonic() + TIMEOUT_S
    while status(container).status.state != cri.CONTAINER_EXITED:
        if time.monotonic() > deadline:
            sys.exit("container %s did not exit within %d s" % (container, TIMEOUT_S))
        time.sleep(0.05)


def main(argv):
    rt = runtime
    commands = {
        "run-pod": run_pod,
        "create": create,
        "start": lambda c: rt().StartContainer(
            cri.StartContainerRequest(container_id=c), timeout=TIMEOUT_S),
        "stop": lambda c, t="0": rt().StopContainer(
            cri.StopContainerRequest(container_id=c, timeout=int(t)), timeout=TIMEOUT_S),
        "remove": lambda c: rt().RemoveContainer(
            cri.RemoveContainerRequest(container_id=c), timeout=TIMEOUT_S),
        "pid": pid,
        "wait-exited": wait_exited,
        "stop-pod": lambda s: rt().StopPodSandbox(
            cri.StopPodSandboxRequest(pod_sandbox_id=s), timeout=TIMEOUT_S),
        "remove-pod": lambda s: rt().RemovePodSandbox(
            cri.RemovePodSandboxRequest(pod_sandbox_id=s), timeout=TIMEOUT_S),
    }
    if len(argv) < 2 or argv[1] not in commands:
        sys.exit(__doc__)
    try:
        commands[argv[1]](*argv[2:])
    except grpc.RpcError as e:
        sys.exit("%s: %s" % (argv[1], e.details()))


if __name__ == "__main__":
    main(sys.argv)
