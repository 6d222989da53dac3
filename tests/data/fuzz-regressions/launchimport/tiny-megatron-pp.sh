#!/bin/bash
# A small Megatron-LM launch: 4 layers on 2 pipeline stages, a 2-way data group.
torchrun --nproc_per_node 4 pretrain_gpt.py \
    --num-layers 4 --hidden-size 512 --num-attention-heads 8 --ffn-hidden-size 2048 \
    --seq-length 1024 --max-position-embeddings 1024 --vocab-size 32000 \
    --micro-batch-size 2 --global-batch-size 16 \
    --pipeline-model-parallel-size 2 --bf16 --use-distributed-optimizer \
    --lr 3e-4 --train-iters 100
