"""One protocol round trip after another: each call reads the store `params.reads` times
(a `kv` message and its `kv_ok`, through the client library), then succeeds."""
import retrylab


@retrylab.tool("create")
def create(args, ctx):
    for _ in range(ctx.params.get("reads", 1000)):
        ctx.kv.get("k")
    return retrylab.unknown("done reading")


if __name__ == "__main__":
    retrylab.run()
