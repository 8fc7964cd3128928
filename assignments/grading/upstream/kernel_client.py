"""jupyter_client's kernel client, with a quicker wait for a new kernel (it overrides the
client's private ``_async_wait_for_ready``; upstream/fingerprints.json records its body),
and no message larger than ``max_message_bytes`` parsed (``read_bounded``).
Rule (upstream/): relies on another package's internals, and says which."""
import re
import time
from queue import Empty

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_core.utils import ensure_async
from traitlets import Integer, default

HEADER_BYTES = 65536   # a header or parent header larger than this is read as empty
HARD_CAP = 8   # ZeroMQ drops a connection whose message part passes this many times the limit


def read_bounded(session, frames, limit):
    """A message received as ZeroMQ frames (``copy=False``), deserialised as jupyter_client does,
    unless its parts add up to more than ``limit`` bytes: then none of its content is read,
    and it comes back as a stream message to stderr that says so, with the headers it had (a
    kernel's cell ends as it would have). Parsing costs many times a message's size: a 42 MB
    output grew a grading worker by 1 GB."""
    _, parts = session.feed_identities(frames, copy=False)
    size = sum(len(p) for p in parts)
    if limit is None or limit < 0 or size <= limit:
        return session.deserialize(parts, copy=False)
    header, parent = ({} if len(p) > HEADER_BYTES else _unpacked(session, p) for p in parts[1:3])
    header = dict(header, msg_type="stream")
    note = (f"[a message of {size} bytes from the kernel was refused unread: more than "
            f"GradingKernelClient.max_message_bytes ({limit})]\n")
    return {"header": header, "msg_id": header.get("msg_id"), "msg_type": "stream", "parent_header": parent,
            "metadata": {}, "content": {"name": "stderr", "text": note}, "buffers": []}


def _unpacked(session, part):
    try:
        found = session.unpack(part.bytes if hasattr(part, "bytes") else part)
    except Exception:
        return {}
    return found if isinstance(found, dict) else {}


class BoundedChannel(AsyncZMQSocketChannel):
    """jupyter_client's channel, reading each message through ``read_bounded`` (its ``_recv``,
    overridden, is fingerprinted) with the client's ``max_message_bytes``."""

    limit = None

    async def _recv(self, **kwargs):
        frames = await self.socket.recv_multipart(copy=False)
        return read_bounded(self.session, frames, self.limit)


class GradingKernelClient(AsyncKernelClient):
    """jupyter_client's client, with a quicker wait for a new kernel. The stock wait gives
    IOPub 0.2 s to show up after the first kernel_info reply (it rarely has: the reply
    usually beats the subscription), then spends another 0.2 s making sure IOPub is quiet;
    per submission that is up to 0.4 s of doing nothing. Same checks, polled every 20 ms,
    on sockets that retry a refused connection every 5 ms instead of every 100. The reply it
    waited for is kept (``kernel_info_reply``): the preprocessor reads the kernel's
    language_info from it instead of asking again."""

    kernel_info_reply = None
    max_message_bytes = Integer(8_000_000, help="Largest message the kernel may send on IOPub or shell: a "
                                "larger one is not parsed, and reads as a note on stderr (read_bounded); past "
                                "8 times this, ZeroMQ refuses it as it arrives and the message is lost. A plot "
                                "or 200 lines of output is far smaller; -1: no limit.").tag(config=True)

    @default("context")
    def _quick_reconnect(self):
        # The client connects as the kernel is forked, before the kernel has bound its
        # sockets; ZeroMQ then tries again only after RECONNECT_IVL, 100 ms by default,
        # which every submission waited for. The kernel binds within about 50 ms.
        context = AsyncKernelClient._context_default(self)
        context.setsockopt(zmq.RECONNECT_IVL, 5)
        # bounded before received whole: past HARD_CAP times the limit ZeroMQ refuses a message
        # part as it arrives (and drops that connection, which reconnects: the message is lost)
        if self.max_message_bytes >= 0:
            context.setsockopt(zmq.MAXMSGSIZE, HARD_CAP * self.max_message_bytes)
        return context

    def _bounded(self, channel):
        channel.limit = self.max_message_bytes
        return channel

    @property
    def iopub_channel(self):
        return self._bounded(super().iopub_channel)

    @property
    def shell_channel(self):
        return self._bounded(super().shell_channel)

    @default("iopub_channel_class")
    def _iopub_class(self):
        return BoundedChannel

    @default("shell_channel_class")
    def _shell_class(self):
        return BoundedChannel

    async def _async_wait_for_ready(self, timeout=None):
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        asked = False
        while True:
            if not asked:   # one request at a time: a booting kernel must not find a queue of them
                self.kernel_info()
                asked = True
            try:
                msg = await ensure_async(self.shell_channel.get_msg(timeout=0.02))
            except Empty:
                msg = None
            if msg is not None and msg["msg_type"] == "kernel_info_reply":
                asked = False
                try:
                    await ensure_async(self.iopub_channel.get_msg(timeout=0.02))
                except Empty:
                    pass   # IOPub not connected yet: ask again
                else:
                    self._handle_kernel_info_reply(msg)
                    self.kernel_info_reply = msg
                    break
            if not await self._async_is_alive():
                said = [line for line in getattr(self.parent, "setup_log", lambda: "")().splitlines()
                        if re.match(r"[\w.]*(Error|Exception)\b", line)]   # why a forked one failed
                raise RuntimeError("Kernel died before replying to kernel_info"
                                   + (f" ({said[-1][:300]})" if said else ""))
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")
        while True:   # drop the status messages of the requests above that have arrived
            try:            # (nbclient ignores any that come later: they answer no cell of its)
                await ensure_async(self.iopub_channel.get_msg(timeout=0))
            except Empty:
                break

    wait_for_ready = _async_wait_for_ready   # the async client aliases the stock one
