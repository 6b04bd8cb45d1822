--num-layers 8 --hidden-size 1024 --num-attention-heads 8

--sequence-parallel true
