# SPDX-License-Identifier: Apache-2.0
"""oci_image.py ROOTFS NAME OUT: an OCI image-layout tar of ROOTFS as one
uncompressed layer, named NAME, that runs `sleep 1000000` (the pause
container's part too), for `ctr images import`: no registry needed."""
import hashlib
import io
import json
import sys
import tarfile


def blob(files, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    files["blobs/sha256/" + digest[7:]] = data
    return digest


def owned_by_root(info):
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def layer(rootfs):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(rootfs, arcname=".", filter=owned_by_root)
    return out.getvalue()


def main(rootfs, name, out):
    files = {}
    layer_data = layer(rootfs)
    layer_digest = blob(files, layer_data)
    config = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": ["sleep", "1000000"], "Env": ["PATH=/bin"]},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }).encode()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": blob(files, config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": len(layer_data)}],
    }).encode()
    files["index.json"] = json.dumps({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": blob(files, manifest), "size": len(manifest),
                       "annotations": {"io.containerd.image.name": name,
                                       "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}}],
    }).encode()
    files["oci-layout"] = b'{"imageLayoutVersion":"1.0.0"}'
    with tarfile.open(out, "w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
