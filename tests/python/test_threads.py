"""Many threads planning at once, on one shared Model and on their own, give the answers one thread
gives (the native code releases the GIL; api::Model is safe to share)."""
import concurrent.futures

import easyplan
from conftest import EXAMPLES

MESHES = ["dp=1,fsdp=8,ep=1,tp=1,sp=1", "dp=1,fsdp=4,ep=1,tp=2,sp=1", "dp=2,fsdp=2,ep=1,tp=2,sp=1",
          "dp=1,fsdp=2,ep=2,tp=2,sp=1"]


def test_threads_share_one_model():
    model = easyplan.Model(EXAMPLES / "mixtral-8x7b")
    expected = {mesh: model.plan(mesh=mesh).to_dict() for mesh in MESHES}
    jobs = MESHES * 16
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda mesh: (mesh, model.plan(mesh=mesh).to_dict()), jobs))
    for mesh, result in results:
        assert result == expected[mesh]


def test_threads_with_their_own_models_and_errors():
    def work(i):
        if i % 3 == 0:
            try:
                easyplan.plan(EXAMPLES / "llama-3.1-8b", mesh="fsdp=-1")
            except easyplan.BadInputError as error:
                return "bad", str(error)
        return "ok", easyplan.plan(EXAMPLES / "llama-3.1-8b", mesh=MESHES[i % 4]).bytes_per_device
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(48)))
    for i, (kind, value) in enumerate(results):
        assert kind == ("bad" if i % 3 == 0 else "ok")
        if kind == "bad":
            assert "needs --devices" in value
