;; One round of the codes' rotation over n floats (a power of two, at least 8) at $y: multiply by
;; the ±1 signs at $signs, then the unscaled fast Walsh–Hadamard transform, with WebAssembly SIMD
;; (the first two levels inside each 4-lane vector by shuffles, the others between vectors).
(module
  (memory (import "env" "memory") 1)
  (func (export "round") (param $y i32) (param $signs i32) (param $n i32)
    (local $i i32) (local $j i32) (local $h i32) (local $end i32) (local $a v128) (local $b v128) (local $x v128)
    (local.set $end (i32.add (local.get $y) (i32.shl (local.get $n) (i32.const 2))))
    ;; Signs, and levels h = 1 and h = 2 within each vector.
    (local.set $i (i32.const 0))
    (block $done1
      (loop $l1
        (br_if $done1 (i32.ge_u (local.get $i) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $x
          (f32x4.mul
            (v128.load (i32.add (local.get $y) (local.get $i)))
            (v128.load (i32.add (local.get $signs) (local.get $i)))))
        ;; h = 1: [x1+x0, x0-x1, x3+x2, x2-x3]
        (local.set $x
          (f32x4.add
            (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $x) (local.get $x))
            (f32x4.mul (local.get $x) (v128.const f32x4 1 -1 1 -1))))
        ;; h = 2: [x2+x0, x3+x1, x0-x2, x1-x3]
        (local.set $x
          (f32x4.add
            (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $x) (local.get $x))
            (f32x4.mul (local.get $x) (v128.const f32x4 1 1 -1 -1))))
        (v128.store (i32.add (local.get $y) (local.get $i)) (local.get $x))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l1)))
    ;; Levels h = 4, 8, … n/2 (in bytes: 16 … 2n): butterflies between vectors h apart.
    (local.set $h (i32.const 16))
    (block $done2
      (loop $levels
        (br_if $done2 (i32.ge_u (local.get $h) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $i (local.get $y))
        (block $done3
          (loop $blocks
            (br_if $done3 (i32.ge_u (local.get $i) (local.get $end)))
            (local.set $j (local.get $i))
            (block $done4
              (loop $pairs
                (br_if $done4 (i32.ge_u (local.get $j) (i32.add (local.get $i) (local.get $h))))
                (local.set $a (v128.load (local.get $j)))
                (local.set $b (v128.load (i32.add (local.get $j) (local.get $h))))
                (v128.store (local.get $j) (f32x4.add (local.get $a) (local.get $b)))
                (v128.store (i32.add (local.get $j) (local.get $h)) (f32x4.sub (local.get $a) (local.get $b)))
                (local.set $j (i32.add (local.get $j) (i32.const 16)))
                (br $pairs)))
            (local.set $i (i32.add (local.get $i) (i32.shl (local.get $h) (i32.const 1))))
            (br $blocks)))
        (local.set $h (i32.shl (local.get $h) (i32.const 1)))
        (br $levels)))))
