# a comment
--num-layers eight --hidden-size 1024 --num-attention-heads 8
