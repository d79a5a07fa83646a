# Placeholder user training code copied into the image by examples/reference.yaml
# (stage 3 of seed 002's reference). Replace it with your training framework.
import torch
import torch.distributed as dist


def main() -> None:
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    x = torch.ones(1, device="cuda")
    dist.all_reduce(x)
    if rank == 0:
        print(f"all_reduce over {dist.get_world_size()} ranks: {x.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
